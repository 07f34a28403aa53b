/**
 * A local user's text as HTML, with its mentions resolved: the accounts they name are looked up
 * (local ones by username, remote ones by username and domain, with one query per kind) and the
 * pure renderer (text/format.ts) links the ones it found. A post may also name remote accounts
 * this server does not know yet: they are looked up on their servers (WebFinger) first, a few
 * per post, as Mastodon does.
 */
import type { Ctx } from "../../context.ts";
import type { AccountRow } from "../../db/schema.ts";
import { accountUrl } from "../../entities/account.ts";
import {
  mentionKey,
  mentionRefs,
  renderText,
  type FormatOptions,
  type MentionRef,
  type MentionTarget,
  type RenderedText,
} from "../../text/format.ts";

export type FormattedText = RenderedText<AccountRow>;

/** The unsuspended accounts that `refs` name, keyed by `mentionKey`. */
async function mentionTargets(ctx: Ctx, refs: readonly MentionRef[]): Promise<Map<string, MentionTarget<AccountRow>>> {
  const local = [...new Set(refs.filter((r) => r.domain === null).map((r) => r.username.toLowerCase()))];
  const remote = refs.filter((r): r is MentionRef & { domain: string } => r.domain !== null);
  const db = ctx.db.kysely;
  const rows: AccountRow[] = [];
  if (local.length > 0)
    rows.push(
      ...(await db
        .selectFrom("accounts")
        .selectAll()
        .where("domain", "is", null)
        .where((eb) => eb(eb.fn("lower", ["username"]), "in", local))
        .where("suspended_at", "is", null)
        .execute()),
    );
  if (remote.length > 0)
    rows.push(
      ...(await db
        .selectFrom("accounts")
        .selectAll()
        .where((eb) =>
          eb.or(
            remote.map((r) =>
              eb.and([
                eb(eb.fn("lower", ["username"]), "=", r.username.toLowerCase()),
                eb(eb.fn("lower", ["domain"]), "=", r.domain.toLowerCase()),
              ]),
            ),
          ),
        )
        .where("suspended_at", "is", null)
        .execute()),
    );
  const targets = new Map<string, MentionTarget<AccountRow>>();
  for (const row of rows)
    targets.set(mentionKey(row.username, row.domain), {
      account: row,
      username: row.username,
      domain: row.domain,
      url: accountUrl(ctx, row),
    });
  return targets;
}

/** How many unknown remote accounts one text may make us look up. */
const REMOTE_LOOKUPS = 5;

/**
 * Renders a local user's text (a status, a bio, a profile field, an announcement). With
 * `resolveRemote` (posts), unknown remote accounts it mentions are looked up on their servers.
 */
export async function formatText(
  ctx: Ctx,
  text: string,
  options: FormatOptions,
  { resolveRemote = false } = {},
): Promise<FormattedText> {
  const localDomains = [ctx.config.localDomain, ctx.config.webDomain];
  const refs = mentionRefs(text, localDomains);
  let mentioned = await mentionTargets(ctx, refs);
  if (resolveRemote) {
    const unknown = refs.filter((r) => r.domain !== null && !mentioned.has(mentionKey(r.username, r.domain)));
    const found = await Promise.all(
      unknown.slice(0, REMOTE_LOOKUPS).map((r) => ctx.remote.account(`${r.username}@${r.domain}`)),
    );
    if (found.some((account) => account !== undefined)) mentioned = await mentionTargets(ctx, refs);
  }
  return renderText(text, { ...options, baseUrl: ctx.config.baseUrl, localDomains, mentioned });
}
