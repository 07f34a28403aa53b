import type { Ctx } from "../../context.ts";
import type { UserRow } from "../../db/schema.ts";
import { digest, randomToken } from "../auth/tokens.ts";
import { queueMail } from "../mail/mailer.ts";
import { loadSettings } from "../instance/settings.ts";

/** Confirmation links stay valid two days, as Mastodon's `confirm_within`. */
const CONFIRM_WITHIN_MS = 2 * 24 * 60 * 60 * 1000;

/** The address a confirmation goes to: a pending new address, else the current one. */
function pendingAddress(user: UserRow): string {
  return user.unconfirmed_email ?? user.email;
}

/** Issues a new confirmation token and queues the e-mail with the link. */
export async function sendConfirmation(ctx: Ctx, user: UserRow): Promise<void> {
  const token = randomToken();
  await ctx.db.kysely
    .updateTable("users")
    .set({ confirmation_token: digest(token), confirmation_sent_at: new Date().toISOString() })
    .where("id", "=", user.id)
    .execute();
  const { values } = await loadSettings(ctx.db.kysely);
  const link = `${ctx.config.baseUrl}/auth/confirmation?confirmation_token=${token}`;
  await queueMail(ctx, {
    to: pendingAddress(user),
    subject: `${values.site_title}: Confirmation instructions for ${ctx.config.localDomain}`,
    text: `Welcome to ${values.site_title}!\n\nTo confirm your e-mail address, open this link:\n\n${link}\n\nThe link is valid for two days. If you did not sign up, ignore this message.\n`,
  });
}

export type ConfirmationResult = "confirmed" | "invalid" | "expired";

/** Confirms the e-mail address a token was sent to. */
export async function confirmEmail(ctx: Ctx, token: string): Promise<ConfirmationResult> {
  if (!token || token.length > 200) return "invalid";
  const user = await ctx.db.kysely
    .selectFrom("users")
    .selectAll()
    .where("confirmation_token", "=", digest(token))
    .executeTakeFirst();
  if (!user) return "invalid";
  if (!user.confirmation_sent_at || Date.parse(user.confirmation_sent_at) + CONFIRM_WITHIN_MS < Date.now())
    return "expired";
  const now = new Date().toISOString();
  await ctx.db.kysely
    .updateTable("users")
    .set({
      confirmed_at: now,
      email: pendingAddress(user),
      unconfirmed_email: null,
      confirmation_token: null,
      updated_at: now,
    })
    .where("id", "=", user.id)
    .execute();
  return "confirmed";
}
