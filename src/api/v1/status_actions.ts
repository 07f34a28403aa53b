import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import type { StatusRow } from "../../db/schema.ts";
import { serializeAccounts } from "../../entities/account.ts";
import { serializeStatus } from "../../entities/status.ts";
import { findVisibleStatus } from "../../services/statuses/find.ts";
import {
  actionTarget,
  bookmark,
  favourite,
  muteConversation,
  pin,
  reblog,
  unbookmark,
  unfavourite,
  unmuteConversation,
  unpin,
  unreblog,
} from "../../services/statuses/interactions.ts";
import type { UserViewer } from "../../services/auth/viewer.ts";
import { userOf } from "../auth.ts";
import { fetchPage, type PageParams } from "../../db/paging.ts";
import { pageParams, setLinkHeader } from "../pagination.ts";
import { toId, toStringParam } from "../params.ts";

type Action = (ctx: Ctx, viewer: UserViewer, status: StatusRow, req: FastifyRequest) => Promise<StatusRow | void>;

/** POST /api/v1/statuses/:id/<name>: acts on the (boosted) status and answers with it. */
const ACTIONS: Array<[name: string, scope: string, action: Action]> = [
  ["favourite", "write:favourites", (ctx, v, s) => favourite(ctx, v.account, s)],
  ["unfavourite", "write:favourites", (ctx, v, s) => unfavourite(ctx, v.account, s)],
  ["bookmark", "write:bookmarks", (ctx, v, s) => bookmark(ctx, v.account, s)],
  ["unbookmark", "write:bookmarks", (ctx, v, s) => unbookmark(ctx, v.account, s)],
  ["mute", "write:mutes", (ctx, v, s) => muteConversation(ctx, v.account, s)],
  ["unmute", "write:mutes", (ctx, v, s) => unmuteConversation(ctx, v.account, s)],
  ["pin", "write:accounts", (ctx, v, s) => pin(ctx, v.account, s)],
  ["unpin", "write:accounts", (ctx, v, s) => unpin(ctx, v.account, s)],
  ["unreblog", "write:statuses", (ctx, v, s) => unreblog(ctx, v.account, s)],
];

export default async function statusActionRoutes(app: FastifyInstance, ctx: Ctx) {
  for (const [name, scope, action] of ACTIONS) {
    app.post(
      `/api/v1/statuses/:id/${name}`,
      { preHandler: app.auth({ scopes: [scope], user: true }), config: name === "unreblog" ? { throttles: ["status_deletion"] } : {} },
      async (req) => {
        const viewer = userOf(req);
        // Pinning looks at the status itself: a boost must be refused, not swapped for the original.
        const status = name === "pin" || name === "unpin"
          ? await findVisibleStatus(ctx, toId(req.input.id), viewer.account.id)
          : await actionTarget(ctx, toId(req.input.id), viewer.account);
        const updated = (await action(ctx, viewer, status, req)) ?? status;
        const fresh = await ctx.db.kysely.selectFrom("statuses").selectAll().where("id", "=", updated.id).executeTakeFirstOrThrow();
        return serializeStatus(ctx, fresh, viewer.account);
      },
    );
  }

  app.post("/api/v1/statuses/:id/reblog", { preHandler: app.auth({ scopes: ["write:statuses"], user: true }) }, async (req) => {
    const viewer = userOf(req);
    const status = await actionTarget(ctx, toId(req.input.id), viewer.account);
    const boost = await reblog(ctx, viewer.account, status, toStringParam(req.input.visibility));
    return serializeStatus(ctx, boost, viewer.account);
  });

  const readStatuses = app.auth({ optional: true, scopes: ["read:statuses"] });

  /** Accounts behind join rows (boosts, favourites), paged by the join rows' IDs. */
  const accountsBehind = async (req: FastifyRequest, reply: FastifyReply, rowsFor: (statusId: string, page: PageParams) => Promise<Array<{ cursor: string; account_id: string }>>) => {
    const viewer = req.viewer?.account ?? undefined;
    const status = await findVisibleStatus(ctx, toId(req.input.id), viewer?.id);
    const page = pageParams(req.input, 40, 80);
    const rows = await rowsFor(status.id, page);
    const accounts = rows.length
      ? await ctx.db.kysely.selectFrom("accounts").selectAll().where("id", "in", rows.map((r) => r.account_id)).where("suspended_at", "is", null).execute()
      : [];
    const byId = new Map(accounts.map((a) => [a.id, a]));
    setLinkHeader(ctx.config, req, reply, { items: rows, cursor: (r) => r.cursor, limit: page.limit, prevParam: "since_id" });
    return serializeAccounts(ctx, rows.map((r) => byId.get(r.account_id)).filter((a) => a !== undefined));
  };

  app.get("/api/v1/statuses/:id/reblogged_by", { preHandler: readStatuses }, (req, reply) =>
    accountsBehind(req, reply, (statusId, page) =>
      // Followers-only boosts stay out of the public list, as Mastodon lists only public and unlisted ones.
      fetchPage(
        ctx.db.kysely.selectFrom("statuses").select(["id as cursor", "account_id"]).where("reblog_of_id", "=", statusId).where("visibility", "in", ["public", "unlisted"]),
        "id",
        page,
      ),
    ),
  );

  app.get("/api/v1/statuses/:id/favourited_by", { preHandler: readStatuses }, (req, reply) =>
    accountsBehind(req, reply, (statusId, page) =>
      fetchPage(ctx.db.kysely.selectFrom("favourites").select(["id as cursor", "account_id"]).where("status_id", "=", statusId), "id", page),
    ),
  );
}
