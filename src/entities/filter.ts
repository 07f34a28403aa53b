import type { CustomFilterKeywordRow, CustomFilterRow, CustomFilterStatusRow, FilterContext } from "../db/schema.ts";
import type { ActiveFilter } from "../db/queries/filters.ts";
import { htmlToPlainText } from "../text/sanitize.ts";

export interface FilterKeywordJson {
  id: string;
  keyword: string;
  whole_word: boolean;
}

export interface FilterStatusJson {
  id: string;
  status_id: string;
}

/** A Filter as a FilterResult names it (without keywords and statuses). */
export interface FilterSummaryJson {
  id: string;
  title: string;
  context: FilterContext[];
  expires_at: string | null;
  filter_action: string;
}

/** The Filter entity (v2). */
export interface FilterJson extends FilterSummaryJson {
  keywords: FilterKeywordJson[];
  statuses: FilterStatusJson[];
}

/** The FilterResult entity, in `Status.filtered`. */
export interface FilterResultJson {
  filter: FilterSummaryJson;
  keyword_matches: string[] | null;
  status_matches: string[] | null;
}

/** The V1::Filter entity: one per keyword. */
export interface V1FilterJson {
  id: string;
  phrase: string;
  context: FilterContext[];
  whole_word: boolean;
  expires_at: string | null;
  irreversible: boolean;
}

export const contextsOf = (row: Pick<CustomFilterRow, "context">): FilterContext[] =>
  JSON.parse(row.context) as FilterContext[];

export function serializeFilterKeyword(row: CustomFilterKeywordRow): FilterKeywordJson {
  return { id: row.id, keyword: row.keyword, whole_word: row.whole_word };
}

export function serializeFilterStatus(row: CustomFilterStatusRow): FilterStatusJson {
  return { id: row.id, status_id: String(row.status_id) };
}

function summaryOf(row: CustomFilterRow): FilterSummaryJson {
  return {
    id: row.id,
    title: row.title,
    context: contextsOf(row),
    expires_at: row.expires_at,
    filter_action: row.action,
  };
}

export function serializeFilter(
  row: CustomFilterRow,
  keywords: readonly CustomFilterKeywordRow[],
  statuses: readonly CustomFilterStatusRow[],
): FilterJson {
  return {
    ...summaryOf(row),
    keywords: keywords.map(serializeFilterKeyword),
    statuses: statuses.map(serializeFilterStatus),
  };
}

export function serializeV1Filter(keyword: CustomFilterKeywordRow, filter: CustomFilterRow): V1FilterJson {
  return {
    id: keyword.id,
    phrase: keyword.keyword,
    context: contextsOf(filter),
    whole_word: keyword.whole_word,
    expires_at: filter.expires_at,
    irreversible: filter.action === "hide",
  };
}

const WORD = /[\p{L}\p{N}_]/u;
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * One pattern for a filter's keywords, case-insensitive. A whole-word keyword does not match where
 * it starts with a word character preceded by one, or ends with a word character followed by one.
 */
export function keywordPattern(
  keywords: readonly Pick<CustomFilterKeywordRow, "keyword" | "whole_word">[],
): RegExp | null {
  const parts = keywords
    .filter((k) => k.keyword.length > 0)
    .map((k) => {
      const body = escapeRegExp(k.keyword);
      if (!k.whole_word) return body;
      const before = WORD.test(k.keyword[0]!) ? "(?<![\\p{L}\\p{N}_])" : "";
      const after = WORD.test([...k.keyword].pop()!) ? "(?![\\p{L}\\p{N}_])" : "";
      return `${before}${body}${after}`;
    });
  return parts.length > 0 ? new RegExp(parts.join("|"), "iu") : null;
}

/** What a status offers to filters: its content warning, text, poll options and media descriptions. */
export interface FilterableText {
  spoilerText: string;
  html: string;
  pollOptions: readonly string[];
  mediaDescriptions: readonly (string | null)[];
}

/** The filters in force for one viewer, compiled once for a page. */
export class FilterSet {
  readonly #filters: Array<{ active: ActiveFilter; pattern: RegExp | null }>;

  constructor(filters: readonly ActiveFilter[]) {
    this.#filters = filters.map((active) => ({ active, pattern: keywordPattern(active.keywords) }));
  }

  get empty(): boolean {
    return this.#filters.length === 0;
  }

  /**
   * The FilterResults of a status (`ids`: its own and, for a boost, the boosted one's): every
   * filter in force that matches, limited to those of `context` when the place of display is known.
   */
  resultsFor(ids: readonly string[], text: FilterableText, context?: FilterContext): FilterResultJson[] {
    const results: FilterResultJson[] = [];
    let searchable: string | undefined;
    for (const { active, pattern } of this.#filters) {
      if (context && !contextsOf(active.filter).includes(context)) continue;
      const statusMatches = ids.filter((id) => active.statusIds.has(id));
      let keywordMatch: string | undefined;
      if (pattern) {
        searchable ??= [
          text.spoilerText,
          htmlToPlainText(text.html),
          ...text.pollOptions,
          ...text.mediaDescriptions.filter((d): d is string => !!d),
        ].join("\n\n");
        keywordMatch = pattern.exec(searchable)?.[0];
      }
      if (keywordMatch === undefined && statusMatches.length === 0) continue;
      results.push({
        filter: summaryOf(active.filter),
        keyword_matches: keywordMatch === undefined ? null : [keywordMatch],
        status_matches: statusMatches.length > 0 ? statusMatches : null,
      });
    }
    return results;
  }
}

/** Whether a status with these results is hidden outright (a `hide` filter matched). */
export const hiddenBy = (results: readonly FilterResultJson[] | undefined) =>
  (results ?? []).some((r) => r.filter.filter_action === "hide");
