import type { FastifyReply, FastifyRequest } from "fastify";
import type { Config } from "../config.ts";
import type { Ctx } from "../context.ts";
import type { PageParams } from "../db/paging.ts";
import type { AccountPage } from "../db/queries/accounts.ts";
import { serializeAccounts, type Account } from "../entities/account.ts";
import { BadRequest } from "../errors.ts";
import { toId, toInteger, toLimit, type ParamObject, type ParamValue } from "./params.ts";

/** Reads `max_id` / `since_id` / `min_id` / `limit` (clamped to the endpoint's default and maximum). */
export function pageParams(input: ParamObject, defaultLimit: number, maxLimit: number): PageParams {
  return {
    maxId: toId(input.max_id),
    sinceId: toId(input.since_id),
    minId: toId(input.min_id),
    limit: toLimit(input.limit, defaultLimit, maxLimit),
  };
}

/** Rails' `to_query`: keys sorted, nested arrays as `name[]`, values form-encoded. */
export function toQueryString(params: Record<string, ParamValue | undefined>): string {
  const parts: string[] = [];
  const encode = (text: string) => encodeURIComponent(text).replace(/%20/g, "+");
  for (const key of Object.keys(params).sort()) {
    const value = params[key];
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) {
      for (const item of value)
        if (typeof item !== "object" || item === null)
          parts.push(`${encode(`${key}[]`)}=${encode(String(item ?? ""))}`);
    } else if (typeof value !== "object") {
      parts.push(`${encode(key)}=${encode(String(value))}`);
    }
  }
  return parts.join("&");
}

export interface LinkOptions<T> {
  /** The page as returned to the client, newest first. */
  items: readonly T[];
  /** The cursor of an item (its ID, or the ID of the join row behind it). */
  cursor: (item: T) => string;
  /** The request parameters carried into the links (`limit` is always kept when given). */
  keep?: readonly string[];
  /** Status-like lists page back with `min_id`; account lists with `since_id`. */
  prevParam?: "min_id" | "since_id";
  /** When `next` appears: whenever the page is non-empty (timelines), or only when it is full. */
  nextWhen?: "non-empty" | "full";
  limit: number;
}

/** Writes the `Link` header of a page: `next` leads to older items, `prev` to newer ones. */
export function setLinkHeader<T>(
  config: Config,
  req: FastifyRequest,
  reply: FastifyReply,
  options: LinkOptions<T>,
): void {
  const { items } = options;
  if (items.length === 0) return;
  const base: Record<string, ParamValue | undefined> = {};
  for (const key of ["limit", ...(options.keep ?? [])]) {
    if (req.input[key] !== undefined && req.input[key] !== "") base[key] = req.input[key];
  }
  const path = req.url.split("?")[0];
  const url = (extra: Record<string, string>) => {
    const query = toQueryString({ ...base, ...extra });
    return `${config.baseUrl}${path}${query ? `?${query}` : ""}`;
  };
  const links: string[] = [];
  const full = items.length >= options.limit;
  if (options.nextWhen === "non-empty" || full) {
    links.push(`<${url({ max_id: options.cursor(items[items.length - 1]) })}>; rel="next"`);
  }
  const prevParam = options.prevParam ?? "min_id";
  links.push(`<${url({ [prevParam]: options.cursor(items[0]) })}>; rel="prev"`);
  reply.header("Link", links.join(", "));
}

/**
 * How deep offset paging goes. An offset costs a walk over every row before it, so past this a list
 * answers an empty page (and no `next` link) instead of a scan — or, beyond 64 bits, a database error.
 */
export const MAX_OFFSET = 10_000;

/**
 * `limit` and `offset` of an offset-paged list (trends, suggestions, the directory, search): absent
 * → defaults, `limit` capped at `maxLimit`; an offset past `MAX_OFFSET` asks for nothing (limit 0).
 * Negative values count as 0 (and their absolute value for `limit`, as Mastodon reads it), unless
 * `refuseNegative` (search, where Mastodon answers 400).
 */
export function offsetParams(
  input: ParamObject,
  defaultLimit: number,
  maxLimit: number,
  options: { refuseNegative?: boolean } = {},
): { limit: number; offset: number } {
  const offset = toInteger(input.offset) ?? 0;
  if (options.refuseNegative && (offset < 0 || (toInteger(input.limit) ?? 0) < 0))
    throw new BadRequest("limit and offset must not be negative");
  if (offset > MAX_OFFSET) return { limit: 0, offset: MAX_OFFSET };
  return { limit: toLimit(input.limit, defaultLimit, maxLimit), offset: Math.max(0, offset) };
}

/**
 * The `Link` header of an offset-paged list, as Mastodon writes it: `next` (offset + limit) when the
 * page is full, `prev` (offset − limit) only when the offset is beyond the first page.
 */
export function setOffsetLinkHeader(
  config: Config,
  req: FastifyRequest,
  reply: FastifyReply,
  page: { limit: number; offset: number; count: number },
): void {
  const path = req.url.split("?")[0];
  const url = (offset: number) =>
    `${config.baseUrl}${path}?${toQueryString({ limit: String(page.limit), offset: String(offset) })}`;
  if (page.limit === 0) return;
  const links: string[] = [];
  if (page.count > 0 && page.count >= page.limit) links.push(`<${url(page.offset + page.limit)}>; rel="next"`);
  if (page.offset > page.limit) links.push(`<${url(page.offset - page.limit)}>; rel="prev"`);
  if (links.length > 0) reply.header("Link", links.join(", "));
}

/**
 * Answers a page of accounts behind join rows (followers, blocks, favourites…): the Link header
 * from the rows' IDs, pointing back with `since_id` as Mastodon's account lists do, and the accounts.
 */
export async function answerAccountPage(
  ctx: Ctx,
  req: FastifyRequest,
  reply: FastifyReply,
  page: PageParams,
  result: AccountPage,
): Promise<Account[]> {
  setLinkHeader(ctx.config, req, reply, {
    items: result.rows,
    cursor: (r) => r.id,
    limit: page.limit,
    prevParam: "since_id",
  });
  return serializeAccounts(ctx, result.accounts);
}
