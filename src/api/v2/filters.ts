import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeFilter, serializeFilterKeyword, serializeFilterStatus } from "../../entities/filter.ts";
import {
  addFilterStatus,
  addKeyword,
  createFilter,
  deleteFilter,
  deleteFilterStatus,
  deleteKeyword,
  filterOf,
  filterStatusesOf,
  filtersOf,
  keywordsOf,
  ownFilterStatus,
  ownKeyword,
  updateFilter,
  updateKeyword,
  type FilterParams,
  type KeywordChange,
  type LoadedFilter,
} from "../../services/filters/filters.ts";
import { userOf } from "../auth.ts";
import {
  isUploadedFile,
  orderedValues,
  toBoolean,
  toId,
  toInteger,
  toStringArray,
  toStringParam,
  type ParamObject,
  type ParamValue,
} from "../params.ts";
import { updateRoute } from "../update_route.ts";

const render = (loaded: LoadedFilter) => serializeFilter(loaded.filter, loaded.keywords, loaded.statuses);

/** `expires_in` in seconds: absent keeps the expiry, empty (or null) means never. */
export function expiresInParam(value: ParamValue | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || value === "") return null;
  const seconds = toInteger(value);
  return seconds === undefined || seconds <= 0 ? null : seconds;
}

/** `keywords_attributes`: an array (`[][keyword]`, JSON) or a hash by index (`[0][keyword]`). */
function keywordChanges(value: ParamValue | undefined): KeywordChange[] | undefined {
  if (value === undefined || value === null) return undefined;
  const items = Array.isArray(value)
    ? value
    : typeof value === "object" && !isUploadedFile(value)
      ? orderedValues(value as ParamObject)
      : [];
  return items.flatMap((item) => {
    if (typeof item !== "object" || item === null || Array.isArray(item) || isUploadedFile(item)) return [];
    const attributes = item as ParamObject;
    return [
      {
        id: toId(attributes.id),
        keyword: toStringParam(attributes.keyword),
        wholeWord: toBoolean(attributes.whole_word),
        destroy: toBoolean(attributes._destroy) === true,
      },
    ];
  });
}

function filterParams(input: ParamObject): FilterParams {
  return {
    title: toStringParam(input.title),
    context: input.context === undefined ? undefined : toStringArray(input.context),
    action: toStringParam(input.filter_action),
    expiresIn: expiresInParam(input.expires_in),
    keywords: keywordChanges(input.keywords_attributes),
  };
}

/** Filters v2 with their keywords and statuses (Mastodon 4.0). */
export default async function filterRoutes(app: FastifyInstance, ctx: Ctx) {
  const read = app.auth({ scopes: ["read:filters"], user: true });
  const write = app.auth({ scopes: ["write:filters"], user: true });
  const account = (req: Parameters<typeof userOf>[0]) => userOf(req).account.id;

  app.get("/api/v2/filters", { preHandler: read }, async (req) => (await filtersOf(ctx, account(req))).map(render));
  app.post("/api/v2/filters", { preHandler: write }, async (req) =>
    render(await createFilter(ctx, account(req), filterParams(req.input))),
  );
  app.get("/api/v2/filters/:id", { preHandler: read }, async (req) =>
    render(await filterOf(ctx, account(req), toId(req.input.id))),
  );
  updateRoute(app, "/api/v2/filters/:id", { preHandler: write }, async (req) =>
    render(await updateFilter(ctx, account(req), toId(req.input.id), filterParams(req.input))),
  );
  app.delete("/api/v2/filters/:id", { preHandler: write }, async (req) => {
    await deleteFilter(ctx, account(req), toId(req.input.id));
    return {};
  });

  app.get("/api/v2/filters/:id/keywords", { preHandler: read }, async (req) =>
    (await keywordsOf(ctx, account(req), toId(req.input.id))).map(serializeFilterKeyword),
  );
  app.post("/api/v2/filters/:id/keywords", { preHandler: write }, async (req) =>
    serializeFilterKeyword(
      await addKeyword(
        ctx,
        account(req),
        toId(req.input.id),
        toStringParam(req.input.keyword),
        toBoolean(req.input.whole_word),
      ),
    ),
  );
  app.get("/api/v2/filters/keywords/:id", { preHandler: read }, async (req) =>
    serializeFilterKeyword((await ownKeyword(ctx, account(req), toId(req.input.id))).keyword),
  );
  updateRoute(app, "/api/v2/filters/keywords/:id", { preHandler: write }, async (req) =>
    serializeFilterKeyword(
      await updateKeyword(
        ctx,
        account(req),
        toId(req.input.id),
        toStringParam(req.input.keyword),
        toBoolean(req.input.whole_word),
      ),
    ),
  );
  app.delete("/api/v2/filters/keywords/:id", { preHandler: write }, async (req) => {
    await deleteKeyword(ctx, account(req), toId(req.input.id));
    return {};
  });

  app.get("/api/v2/filters/:id/statuses", { preHandler: read }, async (req) =>
    (await filterStatusesOf(ctx, account(req), toId(req.input.id))).map(serializeFilterStatus),
  );
  app.post("/api/v2/filters/:id/statuses", { preHandler: write }, async (req) =>
    serializeFilterStatus(await addFilterStatus(ctx, account(req), toId(req.input.id), toId(req.input.status_id))),
  );
  app.get("/api/v2/filters/statuses/:id", { preHandler: read }, async (req) =>
    serializeFilterStatus(await ownFilterStatus(ctx, account(req), toId(req.input.id))),
  );
  app.delete("/api/v2/filters/statuses/:id", { preHandler: write }, async (req) => {
    await deleteFilterStatus(ctx, account(req), toId(req.input.id));
    return {};
  });
}
