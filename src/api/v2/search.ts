import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeAccounts } from "../../entities/account.ts";
import { serializeStatuses } from "../../entities/status.ts";
import { serializeTags } from "../../entities/tag.ts";
import { ApiError } from "../../errors.ts";
import { search, searchAccounts, SEARCH_TYPES, type SearchType } from "../../services/search/search.ts";
import { userOf } from "../auth.ts";
import { offsetParams } from "../pagination.ts";
import { requireString, toBoolean, toId, toStringParam } from "../params.ts";

/** Search: `GET /api/v2/search` (accounts, hashtags, statuses) and `GET /api/v1/accounts/search`. */
export default async function searchRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/api/v2/search", { preHandler: app.auth({ optional: true, scopes: ["read:search"] }) }, async (req) => {
    const query = requireString(req.input, "q");
    const viewer = req.viewer?.account ?? undefined;
    const resolve = toBoolean(req.input.resolve) === true;
    if (!viewer && req.input.offset !== undefined && req.input.offset !== "")
      throw new ApiError(401, "Search queries pagination is not supported without authentication");
    if (!viewer && resolve)
      throw new ApiError(401, "Search queries that resolve remote resources are not supported without authentication");
    const page = offsetParams(req.input, 20, 40, { refuseNegative: true });
    const type = toStringParam(req.input.type) || undefined;
    // Mastodon finds nothing for a type it does not know.
    if (type && !SEARCH_TYPES.includes(type as SearchType)) return { accounts: [], statuses: [], hashtags: [] };
    const results = await search(ctx, viewer, query, {
      type: type as SearchType | undefined,
      resolve,
      following: toBoolean(req.input.following) === true,
      accountId: toId(req.input.account_id),
      excludeUnreviewed: toBoolean(req.input.exclude_unreviewed) === true,
      ...page,
    });
    const [accounts, statuses, hashtags] = await Promise.all([
      serializeAccounts(ctx, results.accounts),
      serializeStatuses(ctx, results.statuses, viewer),
      serializeTags(ctx, results.hashtags, viewer),
    ]);
    return { accounts, statuses, hashtags };
  });

  app.get(
    "/api/v1/accounts/search",
    { preHandler: app.auth({ scopes: ["read:accounts"], user: true }) },
    async (req) => {
      const query = requireString(req.input, "q");
      const rows = await searchAccounts(ctx, userOf(req).account, query, {
        following: toBoolean(req.input.following) === true,
        ...offsetParams(req.input, 40, 80, { refuseNegative: true }),
      });
      return serializeAccounts(ctx, rows);
    },
  );
}
