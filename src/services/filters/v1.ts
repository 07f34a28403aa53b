/**
 * The v1 filters API (deprecated since Mastodon 4.0) over the v2 rows: one v1 filter per keyword,
 * its ID the keyword's. Creating makes a filter titled by its phrase; `irreversible` is the `hide`
 * action. A change to the context, expiry or action of a filter that has several keywords would
 * change the others too, and is refused as Mastodon refuses it.
 */
import type { Ctx } from "../../context.ts";
import { compareIds } from "../../db/ids.ts";
import type { CustomFilterKeywordRow, CustomFilterRow } from "../../db/schema.ts";
import { Unprocessable, ValidationFailed } from "../../errors.ts";
import {
  createFilter,
  deleteFilter,
  deleteKeyword,
  filtersOf,
  keywordProblems,
  ownKeyword,
  updateFilter,
  updateKeyword,
} from "./filters.ts";

export interface V1Filter {
  keyword: CustomFilterKeywordRow;
  filter: CustomFilterRow;
}

export interface V1FilterParams {
  phrase?: string;
  context?: string[];
  irreversible?: boolean;
  wholeWord?: boolean;
  /** Seconds from now; null: never; undefined: unchanged. */
  expiresIn?: number | null;
}

const SEVERAL_KEYWORDS =
  "These parameters cannot be changed from this application because they apply to more than one filter keyword. Use a more recent application or the web interface.";

async function hasSeveralKeywords(ctx: Ctx, filterId: string): Promise<boolean> {
  const keywords = await ctx.db.kysely
    .selectFrom("custom_filter_keywords")
    .select("id")
    .where("custom_filter_id", "=", filterId)
    .limit(2)
    .execute();
  return keywords.length > 1;
}

/** Every keyword of the account's filters as a v1 filter, expired ones too, in keyword order. */
export async function v1FiltersOf(ctx: Ctx, accountId: string): Promise<V1Filter[]> {
  const filters = await filtersOf(ctx, accountId);
  return filters
    .flatMap(({ filter, keywords }) => keywords.map((keyword) => ({ keyword, filter })))
    .sort((a, b) => compareIds(a.keyword.id, b.keyword.id));
}

export const v1FilterOf = (ctx: Ctx, accountId: string, id: string | undefined): Promise<V1Filter> =>
  ownKeyword(ctx, accountId, id);

export async function createV1Filter(ctx: Ctx, accountId: string, params: V1FilterParams): Promise<V1Filter> {
  const created = await createFilter(ctx, accountId, {
    title: params.phrase ?? "",
    context: params.context,
    action: params.irreversible ? "hide" : "warn",
    expiresIn: params.expiresIn ?? null,
    keywords: [{ keyword: params.phrase, wholeWord: params.wholeWord ?? true }],
  });
  return { filter: created.filter, keyword: created.keywords[0]! };
}

export async function updateV1Filter(
  ctx: Ctx,
  accountId: string,
  id: string | undefined,
  params: V1FilterParams,
): Promise<V1Filter> {
  const { keyword, filter } = await ownKeyword(ctx, accountId, id);
  if (params.phrase !== undefined) {
    const problems = keywordProblems(params.phrase, "Keyword ");
    if (problems.length > 0) throw new ValidationFailed(problems);
  }
  const action = params.irreversible === undefined ? filter.action : params.irreversible ? "hide" : "warn";
  const context = params.context ? [...new Set(params.context)] : undefined;
  const filterChanges =
    (context !== undefined && JSON.stringify(context) !== filter.context) ||
    action !== filter.action ||
    params.expiresIn !== undefined;
  if (filterChanges) {
    if (await hasSeveralKeywords(ctx, filter.id)) throw new Unprocessable(SEVERAL_KEYWORDS);
    await updateFilter(ctx, accountId, filter.id, { context, action, expiresIn: params.expiresIn });
  }
  const updated = await updateKeyword(ctx, accountId, keyword.id, params.phrase, params.wholeWord);
  return ownKeyword(ctx, accountId, updated.id);
}

/** Removes the keyword, and its filter with it when it was the filter's last. */
export async function deleteV1Filter(ctx: Ctx, accountId: string, id: string | undefined): Promise<void> {
  const { keyword, filter } = await ownKeyword(ctx, accountId, id);
  if (await hasSeveralKeywords(ctx, filter.id)) await deleteKeyword(ctx, accountId, keyword.id);
  else await deleteFilter(ctx, accountId, filter.id);
}
