import type { Ctx } from "../context.ts";
import { pendingRequestCount } from "../db/queries/relationships.ts";
import type { AccountRow, UserRoleRow, UserRow } from "../db/schema.ts";
import { loadEmojisFor, type CustomEmoji } from "./custom_emoji.ts";
import { escapeHtml } from "../text/escape.ts";
import { userSettings } from "../db/columns.ts";

export interface AccountField {
  name: string;
  value: string;
  verified_at: string | null;
}

export interface Account {
  id: string;
  username: string;
  acct: string;
  display_name: string;
  locked: boolean;
  bot: boolean;
  discoverable: boolean | null;
  indexable: boolean;
  group: boolean;
  created_at: string;
  note: string;
  url: string;
  uri: string;
  avatar: string;
  avatar_static: string;
  avatar_description: string;
  header: string;
  header_static: string;
  header_description: string;
  followers_count: number;
  following_count: number;
  statuses_count: number;
  last_status_at: string | null;
  hide_collections: boolean | null;
  noindex?: boolean;
  emojis: CustomEmoji[];
  roles?: Array<{ id: string; name: string; color: string }>;
  fields: AccountField[];
  suspended?: true;
  limited?: true;
  memorial?: true;
  /** The account it moved to (one level: that account shows no `moved` of its own). */
  moved?: Account;
}

export interface CredentialAccount extends Account {
  source: {
    privacy: string;
    sensitive: boolean;
    language: string;
    note: string;
    fields: AccountField[];
    follow_requests_count: number;
    hide_collections: boolean | null;
    discoverable: boolean | null;
    indexable: boolean;
  };
  role: { id: string; name: string; permissions: string; color: string; highlighted: boolean };
}

interface StoredField {
  name: string;
  /** Plain text for local accounts, HTML for remote ones. */
  value: string;
  /** Local accounts: the value rendered to HTML when it was saved. */
  value_html?: string;
  verified_at?: string | null;
}

export function storedFields(row: Pick<AccountRow, "fields">): StoredField[] {
  try {
    const parsed: unknown = JSON.parse(row.fields);
    return Array.isArray(parsed) ? (parsed as StoredField[]) : [];
  } catch {
    return [];
  }
}

/** Mastodon shows account creation dates truncated to midnight UTC. */
function midnight(timestamp: string): string {
  return `${timestamp.slice(0, 10)}T00:00:00.000Z`;
}

/**
 * An avatar or header as this server serves it. Other servers' pictures are served from the copy
 * kept here (services/media/remote_profiles.ts); until one is kept — not downloaded yet, refused
 * by `reject_media`, dropped by `media remove --prune-profiles` — the default picture shows, as
 * Mastodon does, so readers' clients never load them from the other server.
 */
function mediaUrl(ctx: Ctx, file: string | null, kind: "avatars" | "headers"): string {
  if (file) return `${ctx.config.baseUrl}/system/${file}`;
  return `${ctx.config.baseUrl}/${kind}/original/missing.png`;
}

export function acctOf(row: Pick<AccountRow, "username" | "domain">): string {
  return row.domain ? `${row.username}@${row.domain}` : row.username;
}

/** The profile page of a local account, or the remote one's URL. */
export function accountUrl(ctx: Ctx, row: Pick<AccountRow, "username" | "domain" | "url" | "uri">): string {
  if (row.domain) return row.url ?? row.uri;
  return `${ctx.config.baseUrl}/@${row.username}`;
}

function renderField(row: AccountRow, field: StoredField): AccountField {
  // Remote values arrive as sanitized HTML; local ones were rendered when saved.
  const value = row.domain ? field.value : (field.value_html ?? escapeHtml(field.value));
  return { name: field.name, value, verified_at: field.verified_at ?? null };
}

function serializeOne(
  ctx: Ctx,
  row: AccountRow,
  emojis: CustomEmoji[],
  highlightedRole: UserRoleRow | undefined,
): Account {
  const suspended = row.suspended_at !== null;
  const bot = row.actor_type === "Service" || row.actor_type === "Application";
  const account: Account = {
    id: row.id,
    username: row.username,
    acct: acctOf(row),
    display_name: suspended ? "" : row.display_name,
    locked: suspended ? false : row.locked,
    bot: suspended ? false : bot,
    discoverable: suspended ? false : row.discoverable,
    indexable: suspended ? false : row.indexable,
    group: row.actor_type === "Group",
    created_at: midnight(row.created_at),
    note: suspended ? "" : row.note,
    url: accountUrl(ctx, row),
    uri: row.uri,
    avatar: mediaUrl(ctx, suspended ? null : row.avatar_file, "avatars"),
    avatar_static: mediaUrl(ctx, suspended ? null : (row.avatar_static_file ?? row.avatar_file), "avatars"),
    avatar_description: suspended ? "" : row.avatar_description,
    header: mediaUrl(ctx, suspended ? null : row.header_file, "headers"),
    header_static: mediaUrl(ctx, suspended ? null : (row.header_static_file ?? row.header_file), "headers"),
    header_description: suspended ? "" : row.header_description,
    followers_count: row.followers_count,
    following_count: row.following_count,
    statuses_count: row.statuses_count,
    last_status_at: row.last_status_at ? row.last_status_at.slice(0, 10) : null,
    hide_collections: row.hide_collections,
    emojis: suspended ? [] : emojis,
    fields: suspended ? [] : storedFields(row).map((field) => renderField(row, field)),
  };
  if (!row.domain) {
    account.noindex = !row.indexable;
    account.roles =
      !suspended && highlightedRole
        ? [{ id: highlightedRole.id, name: highlightedRole.name, color: highlightedRole.color }]
        : [];
  }
  if (suspended) account.suspended = true;
  else if (row.silenced_at) account.limited = true;
  if (row.memorial) account.memorial = true;
  return account;
}

/** Serializes accounts with a fixed number of queries whatever their number. */
export async function serializeAccounts(
  ctx: Ctx,
  rows: readonly AccountRow[],
  { nested = false } = {},
): Promise<Account[]> {
  if (rows.length === 0) return [];
  const movedIds = nested ? [] : [...new Set(rows.map((r) => r.moved_to_account_id).filter((id) => id !== null))];
  const movedTo = new Map<string, Account>();
  if (movedIds.length > 0) {
    const targets = await ctx.db.kysely.selectFrom("accounts").selectAll().where("id", "in", movedIds).execute();
    for (const account of await serializeAccounts(ctx, targets, { nested: true })) movedTo.set(account.id, account);
  }
  const local = rows.filter((r) => r.domain === null).map((r) => r.id);
  const [emojis, roles] = await Promise.all([
    loadEmojisFor(
      ctx,
      rows.map((r) => ({
        key: r.id,
        domain: r.domain,
        texts: [r.display_name, r.note, ...storedFields(r).flatMap((f) => [f.name, f.value])],
      })),
    ),
    local.length === 0
      ? Promise.resolve([])
      : ctx.db.kysely
          .selectFrom("users")
          .innerJoin("user_roles", "user_roles.id", "users.role_id")
          .select([
            "users.account_id",
            "user_roles.id",
            "user_roles.name",
            "user_roles.color",
            "user_roles.highlighted",
            "user_roles.permissions",
            "user_roles.position",
            "user_roles.created_at",
            "user_roles.updated_at",
          ])
          .where("users.account_id", "in", local)
          .where("user_roles.highlighted", "=", true)
          .execute(),
  ]);
  const roleByAccount = new Map(roles.map((r) => [r.account_id, r]));
  return rows.map((row) => {
    const account = serializeOne(ctx, row, emojis.get(row.id) ?? [], roleByAccount.get(row.id));
    const moved = row.moved_to_account_id ? movedTo.get(row.moved_to_account_id) : undefined;
    return moved ? { ...account, moved } : account;
  });
}

export async function serializeAccount(ctx: Ctx, row: AccountRow): Promise<Account> {
  return (await serializeAccounts(ctx, [row]))[0];
}

/** The signed-in user's own account, with `source` and `role`. */
export async function serializeCredentialAccount(
  ctx: Ctx,
  account: AccountRow,
  user: UserRow,
  role: UserRoleRow,
): Promise<CredentialAccount> {
  const base = await serializeAccount(ctx, account);
  const settings = userSettings(user);
  return {
    ...base,
    source: {
      privacy: settings.default_privacy,
      sensitive: settings.default_sensitive,
      language: settings.default_language ?? "",
      note: account.note_text,
      fields: storedFields(account).map((f) => ({ name: f.name, value: f.value, verified_at: f.verified_at ?? null })),
      follow_requests_count: await pendingRequestCount(ctx.db.kysely, account.id),
      hide_collections: account.hide_collections,
      discoverable: account.discoverable,
      indexable: account.indexable,
    },
    role: {
      id: role.id,
      name: role.name,
      permissions: String(role.permissions),
      color: role.color,
      highlighted: role.highlighted,
    },
  };
}
