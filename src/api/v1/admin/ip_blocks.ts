import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../../context.ts";
import { serializeAdminIpBlock } from "../../../entities/ip_block.ts";
import {
  createIpBlock,
  ipAccessDenied,
  ipBlockOf,
  listIpBlocks,
  removeIpBlock,
  updateIpBlock,
  type IpBlockParams,
} from "../../../services/admin/ip_blocks.ts";
import { userOf } from "../../auth.ts";
import { pageParams, setLinkHeader } from "../../pagination.ts";
import { toId, toStringParam, type ParamObject } from "../../params.ts";
import { updateRoute } from "../../update_route.ts";

function ipBlockParams(input: ParamObject): IpBlockParams {
  const expiresIn = input.expires_in;
  return {
    ip: toStringParam(input.ip),
    severity: toStringParam(input.severity),
    comment: toStringParam(input.comment),
    // A JSON number or a string of digits; null or "" clears the expiry.
    expiresIn:
      expiresIn === undefined
        ? undefined
        : expiresIn === null
          ? null
          : typeof expiresIn === "number"
            ? expiresIn
            : (toStringParam(expiresIn) ?? "x"),
  };
}

/**
 * The admin API for IP blocks (Mastodon's Api::V1::Admin::IpBlocksController): the Manage Blocks
 * permission and the ip_blocks scopes. `ipAccessGate` is the `no_access` refusal of every
 * request (Mastodon's Rack::Attack blocklist: a bare 403 `Forbidden`, before anything else is
 * read), answered from the in-memory list of services/admin/ip_blocks.ts; app.ts installs it.
 */
export function ipAccessGate(ctx: Ctx) {
  const refuse = (reply: FastifyReply) => reply.code(403).type("text/plain; charset=utf-8").send("Forbidden\n");
  return (req: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void => {
    const denied = ipAccessDenied(ctx, req.ip);
    if (denied === false) return done();
    if (denied === true) return void refuse(reply);
    denied.then(
      (no) => (no ? void refuse(reply) : done()),
      (error: unknown) => done(error as Error),
    );
  };
}

export default async function adminIpBlockRoutes(app: FastifyInstance, ctx: Ctx) {
  const read = app.auth({ scopes: ["admin:read:ip_blocks"], permission: "manage_blocks" });
  const write = app.auth({ scopes: ["admin:write:ip_blocks"], permission: "manage_blocks" });

  app.get("/api/v1/admin/ip_blocks", { preHandler: read }, async (req, reply) => {
    const page = pageParams(req.input, 100, 200);
    const rows = await listIpBlocks(ctx, page);
    setLinkHeader(ctx.config, req, reply, { items: rows, cursor: (r) => r.id, limit: page.limit });
    return rows.map(serializeAdminIpBlock);
  });
  app.get("/api/v1/admin/ip_blocks/:id", { preHandler: read }, async (req) =>
    serializeAdminIpBlock(await ipBlockOf(ctx, toId(req.input.id))),
  );
  app.post("/api/v1/admin/ip_blocks", { preHandler: write }, async (req) =>
    serializeAdminIpBlock(await createIpBlock(ctx, userOf(req).account.id, ipBlockParams(req.input))),
  );
  updateRoute(app, "/api/v1/admin/ip_blocks/:id", { preHandler: write }, async (req) =>
    serializeAdminIpBlock(
      await updateIpBlock(ctx, userOf(req).account.id, toId(req.input.id), ipBlockParams(req.input)),
    ),
  );
  app.delete("/api/v1/admin/ip_blocks/:id", { preHandler: write }, async (req) => {
    await removeIpBlock(ctx, userOf(req).account.id, toId(req.input.id));
    return {};
  });
}
