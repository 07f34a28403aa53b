/**
 * The one writer of remote accounts: whatever brings an actor (a fetched profile, an activity's
 * sender, a mention), it is stored here, in the same table as local accounts, so no read path
 * learns a second model. An account is found again by its actor id (`uri`); its profile is
 * replaced on each update while counters and local state stay. Domain blocks apply as it is
 * stored: a suspended domain's actors are refused, a silenced domain's are stored silenced.
 */
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";
import { rowWhere } from "../../db/prepared.ts";
import type { AccountRow, Database } from "../../db/schema.ts";
import { ValidationFailed } from "../../errors.ts";
import { sanitizeHtml } from "../../text/sanitize.ts";
import { blockFor } from "../admin/domain_blocks.ts";
import { isAllowedDomain } from "../admin/domain_allows.ts";
import { enqueueProfileImageFetch, profileImagesToFetch } from "../media/remote_profiles.ts";

/** What an actor says of itself, already read from its document. */
export interface RemoteAccountData {
  /** The actor id. */
  uri: string;
  username: string;
  /** The domain of the handle (`user@domain`): WebFinger's, or else the actor id's host. */
  domain: string;
  actorType: "Person" | "Service" | "Application" | "Group" | "Organization";
  displayName: string;
  /** HTML, not yet sanitized. */
  note: string;
  /** Profile fields: names as text, values as HTML not yet sanitized. */
  fields: Array<{ name: string; value: string }>;
  url: string | null;
  inbox: string;
  sharedInbox: string | null;
  outbox: string | null;
  followers: string | null;
  following: string | null;
  featured: string | null;
  /** The actor's key, PEM (SPKI). */
  publicKey: string;
  locked: boolean;
  discoverable: boolean | null;
  indexable: boolean;
  memorial: boolean;
  avatarUrl: string | null;
  headerUrl: string | null;
  /** When the account was made, as the actor says; now when it does not. */
  published: Date | null;
}

/** Refused: the actor's server is suspended by a domain block. */
export class DomainSuspended extends Error {
  override name = "DomainSuspended";
}

const USERNAME = /^[\p{L}\p{N}_](?:[\p{L}\p{N}_.-]*[\p{L}\p{N}_])?$/u;
/** Bounds for what another server may make us store (Mastodon's). */
const DISPLAY_NAME_MAX = 2048;
const NOTE_MAX = 20 * 1024;
const FIELDS_MAX = 50;
const FIELD_NAME_MAX = 255;
const FIELD_VALUE_MAX = 2047;

const cut = (text: string, max: number) => [...text].slice(0, max).join("");

/** The columns of a remote account as `data` describes it. */
function columnsOf(data: RemoteAccountData) {
  return {
    actor_type: data.actorType,
    display_name: cut(data.displayName.trim(), DISPLAY_NAME_MAX),
    note: sanitizeHtml(cut(data.note, NOTE_MAX)),
    fields: JSON.stringify(
      data.fields.slice(0, FIELDS_MAX).map((field) => ({
        name: cut(field.name, FIELD_NAME_MAX),
        value: sanitizeHtml(cut(field.value, FIELD_VALUE_MAX)),
        verified_at: null,
      })),
    ),
    url: data.url,
    inbox_url: data.inbox,
    shared_inbox_url: data.sharedInbox,
    outbox_url: data.outbox,
    followers_url: data.followers,
    following_url: data.following,
    featured_url: data.featured,
    public_key: data.publicKey,
    locked: data.locked,
    discoverable: data.discoverable,
    indexable: data.indexable,
    memorial: data.memorial,
    avatar_remote_url: data.avatarUrl,
    header_remote_url: data.headerUrl,
  };
}

/**
 * Stores (or updates) the remote account `data` describes and returns its row. Refuses a
 * suspended domain (DomainSuspended), a malformed handle, and an actor whose handle another
 * actor already holds.
 */
export async function storeRemoteAccount(ctx: Ctx, data: RemoteAccountData): Promise<AccountRow> {
  const domain = data.domain.toLowerCase();
  if (!USERNAME.test(data.username) || [...data.username].length > 100)
    throw new ValidationFailed("Username is invalid");
  const block = await blockFor(ctx.db.kysely, domain);
  if (block?.severity === "suspend") throw new DomainSuspended(`${domain} is suspended`);
  if (!(await isAllowedDomain(ctx, domain))) throw new DomainSuspended(`${domain} is not allowed to federate`);
  const now = new Date().toISOString();
  const columns = { ...columnsOf(data), fetched_at: now, updated_at: now };
  // Its avatar and header are downloaded by a job when new, changed or not kept (services/media/remote_profiles.ts).
  const queuePictures = async (tx: Kysely<Database>, known: AccountRow | undefined, row: AccountRow) => {
    if (!block?.reject_media) await enqueueProfileImageFetch(ctx, tx, row.id, profileImagesToFetch(known, row));
    return row;
  };
  const stored = await ctx.db.kysely.transaction().execute(async (tx) => {
    const known = await tx.selectFrom("accounts").selectAll().where("uri", "=", data.uri).executeTakeFirst();
    if (known) {
      if (known.domain === null) throw new ValidationFailed("Uri is a local account");
      const updated = await tx
        .updateTable("accounts")
        .set(columns)
        .where("id", "=", known.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return queuePictures(tx, known, updated);
    }
    const holder = await tx
      .selectFrom("accounts")
      .select("uri")
      .where((eb) => eb(eb.fn("lower", ["username"]), "=", data.username.toLowerCase()))
      .where("domain", "=", domain)
      .executeTakeFirst();
    if (holder) throw new ValidationFailed(`Username ${data.username}@${domain} belongs to another actor`);
    const inserted = await tx
      .insertInto("accounts")
      .values({
        id: newId(),
        username: data.username,
        domain,
        uri: data.uri,
        ...columns,
        silenced_at: block?.severity === "silence" ? block.created_at : null,
        created_at: (data.published ?? new Date()).toISOString(),
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return queuePictures(tx, undefined, inserted);
  });
  ctx.jobs.wake();
  return stored;
}

/** The account whose actor id is `uri` (local or remote), if this server knows it. */
export async function accountByUri(ctx: Ctx, uri: string): Promise<AccountRow | undefined> {
  return rowWhere(ctx.db.kysely, "accounts", "uri", uri);
}

/** The remote account whose profile page is `url`, if this server knows it. */
export async function accountByUrl(ctx: Ctx, url: string): Promise<AccountRow | undefined> {
  return ctx.db.kysely
    .selectFrom("accounts")
    .selectAll()
    .where("url", "=", url)
    .where("domain", "is not", null)
    .executeTakeFirst();
}
