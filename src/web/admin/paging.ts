/**
 * The paging of the admin area's lists, as the API pages them (Mastodon's `max_id` / `min_id`):
 * each list reads a page newest first and shows "Newer" and "Older" links under it that keep
 * the list's filters. `since_id` is not read: no link here makes one.
 */
import type { FastifyRequest } from "fastify";
import type { PageParams } from "../../db/paging.ts";
import { toId, toLimit } from "../../api/params.ts";
import { html, type SafeHtml } from "../html.ts";

/**
 * The page of a list a request asks for: `?max_id=` (older) or `?min_id=` (newer), and
 * `?limit=` rows up to `max` (`size` when absent or zero).
 */
export function listPage(req: FastifyRequest, size = 40, max = size): PageParams {
  const input = req.input;
  return { maxId: toId(input.max_id), minId: toId(input.min_id), limit: toLimit(input.limit, size, max) || size };
}

/**
 * The links under a page of the list at `path` whose rows had the IDs `ids` (newest first): Older
 * when the page is full or was reached going back up; Newer when it is not the first page; on an
 * empty page past either end, a way back to the newest. `keep` holds what the links carry besides
 * the cursor: the list's filters and `limit`.
 */
export function pageLinks(
  path: string,
  keep: Record<string, string | undefined>,
  page: PageParams,
  ids: readonly string[],
): SafeHtml {
  const link = (cursor: Record<string, string>, label: string, rel: string) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries({ ...keep, ...cursor })) if (v !== undefined && v !== "") params.set(k, v);
    const search = params.toString();
    return html`<a href="${path}${search ? `?${search}` : ""}" rel="${rel}">${label}</a>`;
  };
  const full = ids.length >= page.limit;
  const links: SafeHtml[] = [];
  if (ids.length === 0) {
    if (page.maxId || page.minId) links.push(link({}, "Back to the newest", "first"));
  } else {
    if (page.maxId || (page.minId && full)) links.push(link({ min_id: ids[0] }, "Newer", "prev"));
    if (full || page.minId) links.push(link({ max_id: ids[ids.length - 1] }, "Older", "next"));
  }
  return links.length ? html`<nav aria-label="Pages">${links}</nav>` : html``;
}
