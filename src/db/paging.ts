/**
 * Cursor paging of ID-ordered queries, Mastodon's `Paginable`. The HTTP side (reading the
 * parameters, writing the Link header) lives in api/pagination.ts.
 */
import { sql, type SelectQueryBuilder, type StringReference } from "kysely";

/** Cursor parameters of a list endpoint, already validated. */
export interface PageParams {
  maxId?: string;
  sinceId?: string;
  minId?: string;
  limit: number;
}

/**
 * Applies a page to a query on an ID-ordered `column`, Mastodon's `Paginable`: `max_id` is an
 * exclusive upper bound; `since_id` gives the newest results above it; `min_id` the oldest results
 * above it (read ascending). Run it with `fetchPage`, which returns newest first either way.
 */
export async function fetchPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  column: StringReference<DB, TB>,
  page: PageParams,
): Promise<O[]> {
  if (page.limit <= 0) return [];
  const ref = sql.ref<string>(column);
  let q = query;
  if (page.maxId) q = q.where(ref, "<", page.maxId);
  if (page.minId) {
    const rows = await q.where(ref, ">", page.minId).orderBy(ref, "asc").limit(page.limit).execute();
    return rows.reverse();
  }
  if (page.sinceId) q = q.where(ref, ">", page.sinceId);
  return q.orderBy(ref, "desc").limit(page.limit).execute();
}
