/**
 * Filters (Mastodon's CustomFilter, v2): a user's titled filters, with the contexts they apply
 * in, an action (`warn`, `hide`, `blur`), an optional expiry, and the keywords and statuses they
 * match. The v1 API (filters.v1.ts) shows the same rows, one filter per keyword. Every change
 * runs in one transaction, so a filter is never left half written.
 */
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import { compareIds, newId } from "../../db/ids.ts";
import type {
  CustomFilterKeywordRow,
  CustomFilterRow,
  CustomFilterStatusRow,
  Database,
  FilterAction,
  FilterContext,
} from "../../db/schema.ts";
import { NotFound, ValidationFailed } from "../../errors.ts";
import { findVisibleStatus } from "../visibility/find.ts";

export const FILTER_CONTEXTS: readonly FilterContext[] = ["home", "notifications", "public", "thread", "account"];
export const FILTER_ACTIONS: readonly FilterAction[] = ["warn", "hide", "blur"];
const TITLE_LIMIT = 256;
const KEYWORD_LIMIT = 512;

export interface KeywordChange {
  /** An existing keyword of the filter to change or remove; absent: a new keyword. */
  id?: string;
  keyword?: string;
  wholeWord?: boolean;
  destroy?: boolean;
}

export interface FilterParams {
  title?: string;
  context?: string[];
  action?: string;
  /** Seconds from now; null: never expires; undefined: unchanged (new filters: never). */
  expiresIn?: number | null;
  keywords?: KeywordChange[];
}

export interface LoadedFilter {
  filter: CustomFilterRow;
  keywords: CustomFilterKeywordRow[];
  statuses: CustomFilterStatusRow[];
}

/** The filter's keywords and statuses, for a set of filters in two queries. */
async function loadParts(db: Kysely<Database>, filters: CustomFilterRow[]): Promise<LoadedFilter[]> {
  if (filters.length === 0) return [];
  const ids = filters.map((f) => f.id);
  // One user's filters are few: their parts are read by filter and put in ID order here.
  const byId = <T extends { id: string }>(rows: T[]) => rows.sort((a, b) => compareIds(a.id, b.id));
  const [keywords, statuses] = await Promise.all([
    db.selectFrom("custom_filter_keywords").selectAll().where("custom_filter_id", "in", ids).execute().then(byId),
    db.selectFrom("custom_filter_statuses").selectAll().where("custom_filter_id", "in", ids).execute().then(byId),
  ]);
  return filters.map((filter) => ({
    filter,
    keywords: keywords.filter((k) => k.custom_filter_id === filter.id),
    statuses: statuses.filter((s) => s.custom_filter_id === filter.id),
  }));
}

/** Every filter of the account, expired ones too, oldest first. */
export async function filtersOf(ctx: Ctx, accountId: string): Promise<LoadedFilter[]> {
  const filters = await ctx.db.kysely
    .selectFrom("custom_filters")
    .selectAll()
    .where("account_id", "=", accountId)
    .orderBy("id")
    .execute();
  return loadParts(ctx.db.kysely, filters);
}

/** One filter of the account (404 for unknown IDs and other people's). */
export async function ownFilter(
  db: Kysely<Database>,
  accountId: string,
  id: string | undefined,
): Promise<CustomFilterRow> {
  const row = id
    ? await db
        .selectFrom("custom_filters")
        .selectAll()
        .where("id", "=", id)
        .where("account_id", "=", accountId)
        .executeTakeFirst()
    : undefined;
  if (!row) throw new NotFound();
  return row;
}

export async function filterOf(ctx: Ctx, accountId: string, id: string | undefined): Promise<LoadedFilter> {
  const [loaded] = await loadParts(ctx.db.kysely, [await ownFilter(ctx.db.kysely, accountId, id)]);
  return loaded!;
}

/** Why a keyword cannot be stored, in Mastodon's words (`prefix` names the field). */
export function keywordProblems(keyword: string | undefined, prefix: string): string[] {
  if (keyword === undefined || keyword.trim() === "") return [`${prefix}can't be blank`];
  if ([...keyword].length > KEYWORD_LIMIT) return [`${prefix}is too long (maximum is ${KEYWORD_LIMIT} characters)`];
  return [];
}

/** The problems of a filter's own fields, in Mastodon's words (all of them at once). */
function filterProblems(title: string, context: readonly string[], action: string): string[] {
  const problems: string[] = [];
  if (title.trim() === "") problems.push("Title can't be blank");
  else if ([...title].length > TITLE_LIMIT) problems.push(`Title is too long (maximum is ${TITLE_LIMIT} characters)`);
  if (context.length === 0) problems.push("Context can't be blank");
  if (context.length === 0 || context.some((c) => !(FILTER_CONTEXTS as readonly string[]).includes(c)))
    problems.push("Context None or invalid context supplied");
  if (!(FILTER_ACTIONS as readonly string[]).includes(action)) problems.push("Action is not included in the list");
  return problems;
}

/** Longer expiries are taken as this (a date past it could not even be written down). */
const MAX_EXPIRY_SECONDS = 100 * 365 * 86_400;

const expiryOf = (expiresIn: number | null | undefined, now: Date) =>
  expiresIn === null || expiresIn === undefined
    ? null
    : new Date(now.getTime() + Math.min(expiresIn, MAX_EXPIRY_SECONDS) * 1000).toISOString();

/** Creates a filter with its keywords. */
export async function createFilter(ctx: Ctx, accountId: string, params: FilterParams): Promise<LoadedFilter> {
  const title = params.title ?? "";
  const context = [...new Set(params.context ?? [])];
  const action = params.action ?? "warn";
  const additions = (params.keywords ?? []).filter((k) => !k.destroy);
  const problems = [
    ...filterProblems(title, context, action),
    ...additions.flatMap((k) => keywordProblems(k.keyword, "Keywords keyword ")),
  ];
  if (problems.length > 0) throw new ValidationFailed([...new Set(problems)]);
  const now = new Date();
  const nowIso = now.toISOString();
  const id = newId(now.getTime());
  await ctx.db.kysely.transaction().execute(async (tx) => {
    await tx
      .insertInto("custom_filters")
      .values({
        id,
        account_id: accountId,
        title,
        context: JSON.stringify(context),
        action: action as FilterAction,
        expires_at: expiryOf(params.expiresIn, now),
        created_at: nowIso,
        updated_at: nowIso,
      })
      .execute();
    if (additions.length > 0)
      await tx
        .insertInto("custom_filter_keywords")
        .values(
          additions.map((k) => ({
            id: newId(),
            custom_filter_id: id,
            keyword: k.keyword!,
            whole_word: k.wholeWord ?? true,
            created_at: nowIso,
            updated_at: nowIso,
          })),
        )
        .execute();
  });
  await ctx.dispatcher.emitCommitted({ type: "filters.changed", accountId });
  return filterOf(ctx, accountId, id);
}

/**
 * Changes the fields given; `keywords` with an `id` change or (with `destroy`) remove that keyword
 * of the filter (another filter's keyword is 404), without one add a keyword.
 */
export async function updateFilter(
  ctx: Ctx,
  accountId: string,
  id: string | undefined,
  params: FilterParams,
): Promise<LoadedFilter> {
  const db = ctx.db.kysely;
  const current = await ownFilter(db, accountId, id);
  const title = params.title ?? current.title;
  const context = params.context ? [...new Set(params.context)] : (JSON.parse(current.context) as string[]);
  const action = params.action ?? current.action;
  const changes = params.keywords ?? [];
  const existing = await db
    .selectFrom("custom_filter_keywords")
    .selectAll()
    .where("custom_filter_id", "=", current.id)
    .execute();
  const byId = new Map(existing.map((k) => [k.id, k]));
  for (const change of changes) if (change.id !== undefined && !byId.has(change.id)) throw new NotFound();
  const problems = [
    ...filterProblems(title, context, action),
    ...changes
      .filter((k) => !k.destroy && (k.id === undefined || k.keyword !== undefined))
      .flatMap((k) => keywordProblems(k.keyword, "Keywords keyword ")),
  ];
  if (problems.length > 0) throw new ValidationFailed([...new Set(problems)]);
  const now = new Date();
  const nowIso = now.toISOString();
  await db.transaction().execute(async (tx) => {
    await tx
      .updateTable("custom_filters")
      .set({
        title,
        context: JSON.stringify(context),
        action: action as FilterAction,
        ...(params.expiresIn !== undefined ? { expires_at: expiryOf(params.expiresIn, now) } : {}),
        updated_at: nowIso,
      })
      .where("id", "=", current.id)
      .execute();
    for (const change of changes) {
      if (change.id !== undefined && change.destroy) {
        await tx.deleteFrom("custom_filter_keywords").where("id", "=", change.id).execute();
      } else if (change.id !== undefined) {
        const before = byId.get(change.id)!;
        await tx
          .updateTable("custom_filter_keywords")
          .set({
            keyword: change.keyword ?? before.keyword,
            whole_word: change.wholeWord ?? before.whole_word,
            updated_at: nowIso,
          })
          .where("id", "=", change.id)
          .execute();
      } else if (!change.destroy) {
        await tx
          .insertInto("custom_filter_keywords")
          .values({
            id: newId(),
            custom_filter_id: current.id,
            keyword: change.keyword!,
            whole_word: change.wholeWord ?? true,
            created_at: nowIso,
            updated_at: nowIso,
          })
          .execute();
      }
    }
  });
  await ctx.dispatcher.emitCommitted({ type: "filters.changed", accountId });
  return filterOf(ctx, accountId, current.id);
}

/** Deletes a filter with its keywords and statuses. */
export async function deleteFilter(ctx: Ctx, accountId: string, id: string | undefined): Promise<void> {
  const filter = await ownFilter(ctx.db.kysely, accountId, id);
  await ctx.db.kysely.deleteFrom("custom_filters").where("id", "=", filter.id).execute();
  await ctx.dispatcher.emitCommitted({ type: "filters.changed", accountId });
}

// ---- Keywords and statuses on their own routes. ----

/** One keyword of the account's filters, with its filter (404 otherwise). */
export async function ownKeyword(
  ctx: Ctx,
  accountId: string,
  id: string | undefined,
): Promise<{ keyword: CustomFilterKeywordRow; filter: CustomFilterRow }> {
  const keyword = id
    ? await ctx.db.kysely.selectFrom("custom_filter_keywords").selectAll().where("id", "=", id).executeTakeFirst()
    : undefined;
  if (!keyword) throw new NotFound();
  const filter = await ownFilter(ctx.db.kysely, accountId, keyword.custom_filter_id);
  return { keyword, filter };
}

export async function keywordsOf(ctx: Ctx, accountId: string, filterId: string | undefined) {
  return (await filterOf(ctx, accountId, filterId)).keywords;
}

export async function addKeyword(
  ctx: Ctx,
  accountId: string,
  filterId: string | undefined,
  keyword: string | undefined,
  wholeWord: boolean | undefined,
): Promise<CustomFilterKeywordRow> {
  const filter = await ownFilter(ctx.db.kysely, accountId, filterId);
  const problems = keywordProblems(keyword, "Keyword ");
  if (problems.length > 0) throw new ValidationFailed(problems);
  const now = new Date().toISOString();
  const row = await ctx.db.kysely
    .insertInto("custom_filter_keywords")
    .values({
      id: newId(),
      custom_filter_id: filter.id,
      keyword: keyword!,
      whole_word: wholeWord ?? true,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await ctx.dispatcher.emitCommitted({ type: "filters.changed", accountId });
  return row;
}

export async function updateKeyword(
  ctx: Ctx,
  accountId: string,
  id: string | undefined,
  keyword: string | undefined,
  wholeWord: boolean | undefined,
): Promise<CustomFilterKeywordRow> {
  const { keyword: current } = await ownKeyword(ctx, accountId, id);
  if (keyword !== undefined) {
    const problems = keywordProblems(keyword, "Keyword ");
    if (problems.length > 0) throw new ValidationFailed(problems);
  }
  const row = await ctx.db.kysely
    .updateTable("custom_filter_keywords")
    .set({
      keyword: keyword ?? current.keyword,
      whole_word: wholeWord ?? current.whole_word,
      updated_at: new Date().toISOString(),
    })
    .where("id", "=", current.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await ctx.dispatcher.emitCommitted({ type: "filters.changed", accountId });
  return row;
}

export async function deleteKeyword(ctx: Ctx, accountId: string, id: string | undefined): Promise<void> {
  const { keyword } = await ownKeyword(ctx, accountId, id);
  await ctx.db.kysely.deleteFrom("custom_filter_keywords").where("id", "=", keyword.id).execute();
  await ctx.dispatcher.emitCommitted({ type: "filters.changed", accountId });
}

export async function filterStatusesOf(ctx: Ctx, accountId: string, filterId: string | undefined) {
  return (await filterOf(ctx, accountId, filterId)).statuses;
}

/** Adds a status the account can see to its filter (once). */
export async function addFilterStatus(
  ctx: Ctx,
  accountId: string,
  filterId: string | undefined,
  statusId: string | undefined,
): Promise<CustomFilterStatusRow> {
  const filter = await ownFilter(ctx.db.kysely, accountId, filterId);
  if (!statusId) throw new ValidationFailed("Status must exist");
  const status = await findVisibleStatus(ctx, statusId, accountId).catch((error: unknown) => {
    if (error instanceof NotFound) throw new ValidationFailed("Status must exist");
    throw error;
  });
  const now = new Date().toISOString();
  const row = await ctx.db.kysely
    .insertInto("custom_filter_statuses")
    .values({ id: newId(), custom_filter_id: filter.id, status_id: status.id, created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(["custom_filter_id", "status_id"]).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new ValidationFailed("Status has already been taken");
  await ctx.dispatcher.emitCommitted({ type: "filters.changed", accountId });
  return row;
}

export async function ownFilterStatus(
  ctx: Ctx,
  accountId: string,
  id: string | undefined,
): Promise<CustomFilterStatusRow> {
  const row = id
    ? await ctx.db.kysely.selectFrom("custom_filter_statuses").selectAll().where("id", "=", id).executeTakeFirst()
    : undefined;
  if (!row) throw new NotFound();
  await ownFilter(ctx.db.kysely, accountId, row.custom_filter_id);
  return row;
}

export async function deleteFilterStatus(ctx: Ctx, accountId: string, id: string | undefined): Promise<void> {
  const row = await ownFilterStatus(ctx, accountId, id);
  await ctx.db.kysely.deleteFrom("custom_filter_statuses").where("id", "=", row.id).execute();
  await ctx.dispatcher.emitCommitted({ type: "filters.changed", accountId });
}
