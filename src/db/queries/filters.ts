import type { Kysely } from "kysely";
import type { CustomFilterKeywordRow, CustomFilterRow, Database } from "../schema.ts";

/** A filter in force, with what it matches. */
export interface ActiveFilter {
  filter: CustomFilterRow;
  keywords: CustomFilterKeywordRow[];
  statusIds: Set<string>;
}

/**
 * The account's filters that have not expired, with their keywords and statuses: one query, and
 * two more only when there are filters.
 */
export async function activeFiltersOf(
  db: Kysely<Database>,
  accountId: string,
  now = new Date(),
): Promise<ActiveFilter[]> {
  const filters = await db
    .selectFrom("custom_filters")
    .selectAll()
    .where("account_id", "=", accountId)
    .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now.toISOString())]))
    .execute();
  if (filters.length === 0) return [];
  const ids = filters.map((f) => f.id);
  const [keywords, statuses] = await Promise.all([
    db.selectFrom("custom_filter_keywords").selectAll().where("custom_filter_id", "in", ids).execute(),
    db
      .selectFrom("custom_filter_statuses")
      .select(["custom_filter_id", "status_id"])
      .where("custom_filter_id", "in", ids)
      .execute(),
  ]);
  return filters.map((filter) => ({
    filter,
    keywords: keywords.filter((k) => k.custom_filter_id === filter.id),
    statusIds: new Set(statuses.filter((s) => s.custom_filter_id === filter.id).map((s) => String(s.status_id))),
  }));
}
