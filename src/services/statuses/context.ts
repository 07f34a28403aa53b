import { sql } from "kysely";
import type { Ctx } from "../../context.ts";
import { wantRepliesOf } from "./remote.ts";
import type { StatusRow } from "../../db/schema.ts";
import { hiddenAccounts } from "../visibility/exclusions.ts";
import { filterVisible } from "../visibility/find.ts";

export interface ContextLimits {
  ancestors: number;
  descendants: number;
  depth: number;
}

/** Anonymous readers get a short thread; signed-in users the whole of it (spec: Limits). */
export const ANONYMOUS_CONTEXT: ContextLimits = { ancestors: 40, descendants: 60, depth: 20 };
export const SIGNED_IN_CONTEXT: ContextLimits = { ancestors: 4096, descendants: 4096, depth: 4096 };

/**
 * The thread around `status`: ancestors oldest first, descendants depth-first (siblings oldest
 * first), each filtered for the viewer (visibility, and authors hidden from a signed-in viewer).
 * Two recursive queries whatever the thread's size.
 */
export async function statusContext(
  ctx: Ctx,
  status: StatusRow,
  viewerAccountId: string | undefined,
  limits: ContextLimits,
): Promise<{ ancestors: StatusRow[]; descendants: StatusRow[] }> {
  const db = ctx.db.kysely;
  // A remote post's thread fills downward from its server, for the next reader.
  await wantRepliesOf(ctx, status);
  const ancestorIds = status.in_reply_to_id
    ? (
        await sql<{ id: string; depth: number }>`
          WITH RECURSIVE chain(id, in_reply_to_id, depth) AS (
            SELECT id, in_reply_to_id, 1 FROM statuses WHERE id = ${status.in_reply_to_id}
            UNION ALL
            SELECT s.id, s.in_reply_to_id, chain.depth + 1 FROM statuses s JOIN chain ON s.id = chain.in_reply_to_id
            WHERE chain.depth < ${limits.ancestors}
          )
          SELECT id, depth FROM chain`.execute(db)
      ).rows
    : [];
  const descendantRows = (
    await sql<{ id: string; in_reply_to_id: string }>`
      WITH RECURSIVE tree(id, in_reply_to_id, depth) AS (
        SELECT id, in_reply_to_id, 1 FROM statuses WHERE in_reply_to_id = ${status.id}
        UNION ALL
        SELECT s.id, s.in_reply_to_id, tree.depth + 1 FROM statuses s JOIN tree ON s.in_reply_to_id = tree.id
        WHERE tree.depth < ${limits.depth}
      )
      SELECT id, in_reply_to_id FROM tree LIMIT ${limits.descendants * 4}`.execute(db)
  ).rows.map((r) => ({ id: String(r.id), in_reply_to_id: String(r.in_reply_to_id) }));

  const wanted = [...ancestorIds.map((r) => String(r.id)), ...descendantRows.map((r) => r.id)];
  const rows = wanted.length ? await db.selectFrom("statuses").selectAll().where("id", "in", wanted).execute() : [];
  const readable = await filterVisible(ctx, rows, viewerAccountId);
  // Posts of accounts the viewer blocks, mutes or whose domain they block leave the thread, as in Mastodon.
  const hidden = viewerAccountId
    ? await hiddenAccounts(
        db,
        viewerAccountId,
        readable.map((r) => r.account_id),
      )
    : new Set<string>();
  const visible = new Map(readable.filter((r) => !hidden.has(r.account_id)).map((r) => [r.id, r]));

  const ancestors = [...ancestorIds]
    .sort((a, b) => Number(b.depth) - Number(a.depth))
    .map((r) => visible.get(String(r.id)))
    .filter((r): r is StatusRow => !!r);

  // Depth-first walk of the reply tree, siblings in ID (creation) order.
  const children = new Map<string, string[]>();
  for (const row of descendantRows)
    children.set(row.in_reply_to_id, [...(children.get(row.in_reply_to_id) ?? []), row.id]);
  const ordered: StatusRow[] = [];
  const walk = (id: string) => {
    const kids = (children.get(id) ?? []).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
    for (const kid of kids) {
      if (ordered.length >= limits.descendants) return;
      const row = visible.get(kid);
      if (row) ordered.push(row);
      walk(kid);
    }
  };
  walk(status.id);
  return { ancestors, descendants: ordered };
}
