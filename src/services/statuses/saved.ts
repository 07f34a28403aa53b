/**
 * The viewer's bookmarks and favourites, newest first, paged by the bookmark/favourite IDs (the
 * Link header's cursors). Statuses the viewer can no longer see are left out of the page.
 */
import type { Ctx } from "../../context.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import { statusesByIds } from "../../db/queries/statuses.ts";
import type { AccountRow, StatusRow } from "../../db/schema.ts";
import { filterVisible } from "../visibility/find.ts";

export interface SavedPage {
  /** The page of bookmark (or favourite) rows: the cursors. */
  marks: Array<{ id: string; status_id: string }>;
  /** Their statuses, in the same order, the invisible ones left out. */
  statuses: StatusRow[];
}

export async function savedStatuses(
  ctx: Ctx,
  account: AccountRow,
  kind: "bookmarks" | "favourites",
  page: PageParams,
): Promise<SavedPage> {
  const marks = await fetchPage(
    ctx.db.kysely.selectFrom(kind).select(["id", "status_id"]).where("account_id", "=", account.id),
    "id",
    page,
  );
  const rows = await statusesByIds(
    ctx.db.kysely,
    marks.map((m) => m.status_id),
  );
  const visible = new Map((await filterVisible(ctx, rows, account.id)).map((r) => [r.id, r]));
  return { marks, statuses: marks.map((m) => visible.get(m.status_id)).filter((r) => r !== undefined) };
}
