import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeAccounts } from "../../entities/account.ts";
import { serializeList } from "../../entities/list.ts";
import { targetAccount } from "../../services/accounts/follow.ts";
import {
  addListMembers,
  createList,
  deleteList,
  listMembers,
  listsContaining,
  ownList,
  ownLists,
  removeListMembers,
  updateList,
  type ListParams,
} from "../../services/lists/lists.ts";
import { userOf } from "../auth.ts";
import { pageParams, setLinkHeader } from "../pagination.ts";
import { toBoolean, toId, toInteger, toStringArray, toStringParam, type ParamObject } from "../params.ts";
import { updateRoute } from "../update_route.ts";

function listParams(input: ParamObject): ListParams {
  return {
    title: toStringParam(input.title),
    repliesPolicy: toStringParam(input.replies_policy),
    exclusive: toBoolean(input.exclusive),
  };
}

/** Lists and their members (the list timeline lives with the other timelines). */
export default async function listRoutes(app: FastifyInstance, ctx: Ctx) {
  const read = app.auth({ scopes: ["read:lists"], user: true });
  const write = app.auth({ scopes: ["write:lists"], user: true });

  app.get("/api/v1/lists", { preHandler: read }, async (req) =>
    (await ownLists(ctx, userOf(req).account)).map(serializeList),
  );

  app.get("/api/v1/lists/:id", { preHandler: read }, async (req) =>
    serializeList(await ownList(ctx, userOf(req).account, toId(req.input.id))),
  );

  app.post("/api/v1/lists", { preHandler: write }, async (req) =>
    serializeList(await createList(ctx, userOf(req).account, listParams(req.input))),
  );

  updateRoute(app, "/api/v1/lists/:id", { preHandler: write }, async (req) => {
    const list = await ownList(ctx, userOf(req).account, toId(req.input.id));
    return serializeList(await updateList(ctx, list, listParams(req.input)));
  });

  app.delete("/api/v1/lists/:id", { preHandler: write }, async (req) => {
    await deleteList(ctx, await ownList(ctx, userOf(req).account, toId(req.input.id)));
    return {};
  });

  app.get("/api/v1/lists/:id/accounts", { preHandler: read }, async (req, reply) => {
    const list = await ownList(ctx, userOf(req).account, toId(req.input.id));
    // `limit=0` asks for every member at once, as Mastodon allows.
    const all = toInteger(req.input.limit) === 0;
    const page = pageParams(req.input, 40, 80);
    const { rows, accounts } = await listMembers(ctx, list, all ? "all" : page);
    if (!all)
      setLinkHeader(ctx.config, req, reply, {
        items: rows,
        cursor: (r) => r.id,
        limit: page.limit,
        prevParam: "since_id",
      });
    return serializeAccounts(ctx, accounts);
  });

  app.post("/api/v1/lists/:id/accounts", { preHandler: write }, async (req) => {
    const list = await ownList(ctx, userOf(req).account, toId(req.input.id));
    await addListMembers(ctx, list, toStringArray(req.input.account_ids));
    return {};
  });

  app.delete("/api/v1/lists/:id/accounts", { preHandler: write }, async (req) => {
    const list = await ownList(ctx, userOf(req).account, toId(req.input.id));
    await removeListMembers(ctx, list, toStringArray(req.input.account_ids));
    return {};
  });

  app.get("/api/v1/accounts/:id/lists", { preHandler: read }, async (req) => {
    const viewer = userOf(req);
    const member = await targetAccount(ctx, toId(req.input.id));
    return (await listsContaining(ctx, viewer.account, member)).map(serializeList);
  });
}
