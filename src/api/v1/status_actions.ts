import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import type { StatusRow } from "../../db/schema.ts";
import { serializeStatus } from "../../entities/status.ts";
import { findVisibleStatus, reloadStatus } from "../../services/visibility/find.ts";
import { favouritedBy, rebloggedBy } from "../../services/statuses/interacting_accounts.ts";
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
import { answerAccountPage, pageParams } from "../pagination.ts";
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
      {
        preHandler: app.auth({ scopes: [scope], user: true }),
        config: name === "unreblog" ? { throttles: ["status_deletion"] } : {},
      },
      async (req) => {
        const viewer = userOf(req);
        // Pinning looks at the status itself: a boost must be refused, not swapped for the original.
        const status =
          name === "pin" || name === "unpin"
            ? await findVisibleStatus(ctx, toId(req.input.id), viewer.account.id)
            : await actionTarget(ctx, toId(req.input.id), viewer.account);
        const updated = (await action(ctx, viewer, status, req)) ?? status;
        return serializeStatus(ctx, await reloadStatus(ctx, updated.id), viewer.account);
      },
    );
  }

  app.post(
    "/api/v1/statuses/:id/reblog",
    { preHandler: app.auth({ scopes: ["write:statuses"], user: true }) },
    async (req) => {
      const viewer = userOf(req);
      const status = await actionTarget(ctx, toId(req.input.id), viewer.account);
      const boost = await reblog(ctx, viewer.account, status, toStringParam(req.input.visibility));
      return serializeStatus(ctx, boost, viewer.account);
    },
  );

  const readStatuses = app.auth({ optional: true, scopes: ["read:statuses"] });

  for (const [name, list] of [
    ["reblogged_by", rebloggedBy],
    ["favourited_by", favouritedBy],
  ] as const) {
    app.get(`/api/v1/statuses/:id/${name}`, { preHandler: readStatuses }, async (req, reply) => {
      const viewer = req.viewer?.account ?? undefined;
      const status = await findVisibleStatus(ctx, toId(req.input.id), viewer?.id);
      const page = pageParams(req.input, 40, 80);
      return answerAccountPage(ctx, req, reply, page, await list(ctx, status.id, page, viewer?.id));
    });
  }
}
