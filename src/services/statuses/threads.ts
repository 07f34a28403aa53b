/**
 * Threads as servers name them to each other. A post names its thread by a URI: Mastodon's
 * `conversation` (an OStatus tag or a URL), Akkoma's `context` (a URL). Here a thread is the
 * `conversation_id` its statuses share (replies take their parent's); a conversation begun here is
 * named `https://LOCAL/contexts/ID`, one first seen on another server by the URI it came with (the
 * `conversations` table), as Mastodon does. So a remote post whose parent this server lacks still
 * joins its thread when the thread's name is known, and our replies name the thread the way the
 * server it began on does.
 */
import type { Kysely } from "kysely";
import { newId, isIdLike } from "../../db/ids.ts";
import { prepared, rowWhere } from "../../db/prepared.ts";
import type { Database } from "../../db/schema.ts";

/** Longer names are not kept (an index entry must stay small), nor what is no URI. */
const URI_MAX = 2048;

const localPrefix = (baseUrl: string) => `${baseUrl}/contexts/`;

/** The name of conversation `conversationId`: the URI it came with, or ours. */
export function conversationUri(baseUrl: string, conversationId: string, remoteUri: string | undefined): string {
  return remoteUri ?? `${localPrefix(baseUrl)}${conversationId}`;
}

/** The URIs conversations first seen elsewhere came with, by conversation ID. */
export async function remoteConversationUris(
  db: Kysely<Database>,
  conversationIds: readonly string[],
): Promise<Map<string, string>> {
  const ids = [...new Set(conversationIds.filter(isIdLike))];
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom("conversations").select(["id", "uri"]).where("id", "in", ids).execute();
  return new Map(rows.map((row) => [row.id, row.uri]));
}

/** At most this many of the URIs a remote post names its thread by are looked at. */
export const THREAD_URIS_MAX = 4;

/**
 * The conversation a remote post naming its thread by `uris` (preferred first) belongs to: ours
 * when a URI is our name of a conversation that exists, else the one a URI was first seen with;
 * a thread never seen is a new conversation, named by the first usable URI. Undefined when no URI
 * names a thread. Inside the transaction that stores the post: two posts of a new thread arriving
 * at once get one conversation.
 */
export async function conversationForUris(
  tx: Kysely<Database>,
  baseUrl: string,
  uris: readonly string[],
  now: string,
): Promise<string | undefined> {
  // The first few only: a post may name any number of threads, and each count is a statement.
  const usable = [...new Set(uris)]
    .filter((uri) => uri.length <= URI_MAX && URL.canParse(uri))
    .slice(0, THREAD_URIS_MAX);
  for (const uri of usable) {
    if (!uri.startsWith(localPrefix(baseUrl))) continue;
    const id = uri.slice(localPrefix(baseUrl).length);
    if (!isIdLike(id)) continue;
    const known = await tx.selectFrom("statuses").select("id").where("conversation_id", "=", id).limit(1).execute();
    if (known.length > 0) return id;
  }
  const foreign = usable.filter((uri) => !uri.startsWith(localPrefix(baseUrl)));
  if (foreign.length === 0) return undefined;
  // These run for every post that arrives: built once each (db/prepared.ts), per number of URIs.
  const slots = foreign.map((_, i) => `uri${i}`);
  const known = prepared<string>(
    tx,
    `conversations.by_uris.${foreign.length}`,
    (slot) =>
      tx
        .selectFrom("conversations")
        .select(["id", "uri"])
        .where(
          "uri",
          "in",
          slots.map((name) => slot(name) as string),
        ),
    Object.fromEntries(foreign.map((uri, i) => [slots[i]!, uri])),
  );
  const rows = (await tx.executeQuery<{ id: string; uri: string }>(known)).rows;
  for (const uri of foreign) {
    const row = rows.find((r) => r.uri === uri);
    if (row) return row.id;
  }
  const uri = foreign[0]!;
  const values = { id: newId(), uri, created_at: now };
  await tx.executeQuery(
    prepared<keyof typeof values>(
      tx,
      "conversations.insert",
      (slot) =>
        tx
          .insertInto("conversations")
          .values({ id: slot("id") as string, uri: slot("uri") as string, created_at: slot("created_at") as string })
          .onConflict((oc) => oc.column("uri").doNothing()),
      values,
    ),
  );
  return (await rowWhere(tx, "conversations", "uri", uri))!.id;
}
