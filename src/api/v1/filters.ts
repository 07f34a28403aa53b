import type { FastifyInstance, FastifyReply } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeV1Filter } from "../../entities/filter.ts";
import {
  createV1Filter,
  deleteV1Filter,
  updateV1Filter,
  v1FilterOf,
  v1FiltersOf,
  type V1Filter,
  type V1FilterParams,
} from "../../services/filters/v1.ts";
import { userOf } from "../auth.ts";
import { toBoolean, toId, toStringArray, toStringParam, type ParamObject } from "../params.ts";
import { expiresInParam } from "../v2/filters.ts";
import { updateRoute } from "../update_route.ts";

/** Deprecated since Mastodon 4.0 (2022-11-14), as Mastodon announces it. */
const deprecated = (reply: FastifyReply) => reply.header("Deprecation", "@1668384000");
const render = (v1: V1Filter) => serializeV1Filter(v1.keyword, v1.filter);

function v1Params(input: ParamObject): V1FilterParams {
  return {
    phrase: toStringParam(input.phrase),
    context: input.context === undefined ? undefined : toStringArray(input.context),
    irreversible: toBoolean(input.irreversible),
    wholeWord: toBoolean(input.whole_word),
    expiresIn: expiresInParam(input.expires_in),
  };
}

/** Filters v1: one per keyword of the v2 filters; `irreversible` is the `hide` action. */
export default async function v1FilterRoutes(app: FastifyInstance, ctx: Ctx) {
  const read = app.auth({ scopes: ["read:filters"], user: true });
  const write = app.auth({ scopes: ["write:filters"], user: true });
  const account = (req: Parameters<typeof userOf>[0]) => userOf(req).account.id;

  app.get("/api/v1/filters", { preHandler: read }, async (req, reply) => {
    deprecated(reply);
    return (await v1FiltersOf(ctx, account(req))).map(render);
  });
  app.post("/api/v1/filters", { preHandler: write }, async (req, reply) => {
    deprecated(reply);
    return render(await createV1Filter(ctx, account(req), v1Params(req.input)));
  });
  app.get("/api/v1/filters/:id", { preHandler: read }, async (req, reply) => {
    deprecated(reply);
    return render(await v1FilterOf(ctx, account(req), toId(req.input.id)));
  });
  updateRoute(app, "/api/v1/filters/:id", { preHandler: write }, async (req, reply) => {
    deprecated(reply);
    return render(await updateV1Filter(ctx, account(req), toId(req.input.id), v1Params(req.input)));
  });
  app.delete("/api/v1/filters/:id", { preHandler: write }, async (req, reply) => {
    deprecated(reply);
    await deleteV1Filter(ctx, account(req), toId(req.input.id));
    return {};
  });
}
