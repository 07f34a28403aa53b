import type { Ctx } from "../../context.ts";
import { applicationById } from "../../db/queries/applications.ts";
import type { ApplicationRow } from "../../db/schema.ts";
import { Forbidden, ValidationFailed } from "../../errors.ts";
import { isLanguageCode } from "../../text/languages.ts";
import { canonicalEmailBlocked } from "../admin/canonical_email_blocks.ts";
import { emailDomainBlockMatching } from "../admin/email_domain_blocks.ts";
import { signUpIpRule } from "../admin/ip_blocks.ts";
import { loadSettings } from "../instance/settings.ts";
import { sendConfirmation } from "./confirmation.ts";
import { createLocalUser, type LocalUser } from "./create.ts";
import { describeDetails, validateNewUser, type ErrorCode, type ErrorDetails } from "./validation.ts";

export interface RegistrationParams {
  username: string;
  email: string;
  password: string;
  agreement: boolean;
  locale: string | undefined;
  reason: string | undefined;
}

const REASON_MAX = 1000;

function add(details: ErrorDetails, field: string, error: ErrorCode, description: string): void {
  (details[field] ??= []).push({ error, description });
}

/** `en`, `pt-BR`, `zh-TW`: a supported language, optionally with a region. */
export function isSupportedLocale(locale: string): boolean {
  const match = /^([a-z]{2})(?:[-_][A-Za-z]{2,4})?$/.exec(locale);
  return match !== null && isLanguageCode(match[1]);
}

/**
 * ERR_BLOCKED, ERR_UNREACHABLE or ERR_TAKEN for an address that may not sign up, else undefined:
 * its domain (or one above it) or one of its mail servers is on the e-mail domain block list (the
 * attempt from `ip` counts in the block's history), it cannot receive mail, or the address itself
 * is blocked (a canonical e-mail block answers `taken`, as Mastodon does).
 */
export async function emailDomainProblem(
  ctx: Ctx,
  email: string,
  ip: string | null = null,
): Promise<{ error: ErrorCode; description: string } | undefined> {
  const domain = email.trim().split("@").pop()!.toLowerCase();
  const blocked = { error: "ERR_BLOCKED", description: "is not allowed" } as const;
  if (await emailDomainBlockMatching(ctx, [domain], ip)) return blocked;
  if (!(await ctx.mailDomains.canReceiveMail(domain)))
    return { error: "ERR_UNREACHABLE", description: "does not seem to exist" };
  const servers = ctx.mailDomains.mailServers ? await ctx.mailDomains.mailServers(domain) : [];
  if (servers.length > 0 && (await emailDomainBlockMatching(ctx, servers, ip))) return blocked;
  if (await canonicalEmailBlocked(ctx.db.kysely, email.trim()))
    return { error: "ERR_TAKEN", description: "has already been taken" };
  return undefined;
}

/**
 * Signs up a new local user through `app` (POST /api/v1/accounts and the sign-up page): checks
 * every parameter (422 with `details`), creates an unconfirmed user, sends the confirmation mail
 * and tells the staff who manage users.
 */
/** The app a sign-up through the API comes from: only an app token (client credentials) may register. */
export async function registeringApplication(
  ctx: Ctx,
  viewer: { user: unknown; applicationId: string | null },
): Promise<ApplicationRow> {
  const application = viewer.user ? undefined : await applicationById(ctx.db.kysely, viewer.applicationId);
  if (!application) throw new Forbidden("This method requires an client credentials authentication");
  return application;
}

export async function registerUser(
  ctx: Ctx,
  app: ApplicationRow | null,
  params: RegistrationParams,
  ip: string,
): Promise<LocalUser> {
  const { values: settings } = await loadSettings(ctx.db.kysely);
  if (settings.registrations_mode === "none") throw new Forbidden("Forbidden");
  // IP blocks: a refused network is answered as closed registrations are (Mastodon's allowed_registration?).
  const ipRule = await signUpIpRule(ctx, ip);
  if (ipRule === "sign_up_block") throw new Forbidden("Forbidden");
  const approvalRequired = settings.registrations_mode === "approved" || ipRule === "sign_up_requires_approval";

  const details = await validateNewUser(ctx.db.kysely, params, { allowReserved: false });
  if (!params.agreement) add(details, "agreement", "ERR_ACCEPTED", "must be accepted");
  if (params.locale && !isSupportedLocale(params.locale))
    add(details, "locale", "ERR_INCLUSION", "is not included in the list");
  const reason = params.reason?.trim() ?? "";
  if (settings.registrations_mode === "approved" && settings.require_invite_text && reason === "")
    add(details, "reason", "ERR_BLANK", "can't be blank");
  if ([...reason].length > REASON_MAX)
    add(details, "reason", "ERR_TOO_LONG", `is too long (maximum is ${REASON_MAX} characters)`);
  if (!details.email) {
    const problem = await emailDomainProblem(ctx, params.email, ip || null);
    if (problem) add(details, "email", problem.error, problem.description);
  }
  if (Object.keys(details).length > 0) throw new ValidationFailed(describeDetails(details), { details });

  const created = await createLocalUser(ctx, {
    username: params.username,
    email: params.email,
    password: params.password,
    confirmed: false,
    approved: !approvalRequired,
    locale: params.locale ?? null,
    reason: reason || null,
    signUpIp: ip,
    createdByApplicationId: app?.id ?? null,
  });
  await sendConfirmation(ctx, created.user);
  await ctx.dispatcher.emitCommitted({ type: "account.registered", accountId: created.account.id });
  return created;
}
