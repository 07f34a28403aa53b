import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../../context.ts";
import { serializeAdminDomainBlock } from "../../../entities/domain_block.ts";
import {
  createDomainBlock,
  domainBlockOf,
  listDomainBlocks,
  removeDomainBlock,
  updateDomainBlock,
  type DomainBlockParams,
} from "../../../services/admin/domain_blocks.ts";
import { userOf } from "../../auth.ts";
import { pageParams, setLinkHeader } from "../../pagination.ts";
import { toBoolean, toId, toStringParam, type ParamObject } from "../../params.ts";
import { updateRoute } from "../../update_route.ts";

function blockParams(input: ParamObject): DomainBlockParams {
  return {
    domain: toStringParam(input.domain),
    severity: toStringParam(input.severity),
    rejectMedia: toBoolean(input.reject_media),
    rejectReports: toBoolean(input.reject_reports),
    privateComment: toStringParam(input.private_comment),
    publicComment: toStringParam(input.public_comment),
    obfuscate: toBoolean(input.obfuscate),
  };
}

/** The admin API for blocking servers; the Manage Federation permission and the domain_blocks scopes. */
export default async function adminDomainBlockRoutes(app: FastifyInstance, ctx: Ctx) {
  const read = app.auth({ scopes: ["admin:read:domain_blocks"], permission: "manage_federation" });
  const write = app.auth({ scopes: ["admin:write:domain_blocks"], permission: "manage_federation" });

  app.get("/api/v1/admin/domain_blocks", { preHandler: read }, async (req, reply) => {
    const page = pageParams(req.input, 100, 200);
    const rows = await listDomainBlocks(ctx, page);
    setLinkHeader(ctx.config, req, reply, { items: rows, cursor: (r) => r.id, limit: page.limit });
    return rows.map(serializeAdminDomainBlock);
  });
  app.get("/api/v1/admin/domain_blocks/:id", { preHandler: read }, async (req) =>
    serializeAdminDomainBlock(await domainBlockOf(ctx, toId(req.input.id))),
  );
  app.post("/api/v1/admin/domain_blocks", { preHandler: write }, async (req) =>
    serializeAdminDomainBlock(
      await createDomainBlock(ctx, blockParams(req.input), serializeAdminDomainBlock, userOf(req).account.id),
    ),
  );
  updateRoute(app, "/api/v1/admin/domain_blocks/:id", { preHandler: write }, async (req) => {
    const { domain: _ignored, ...changes } = blockParams(req.input);
    return serializeAdminDomainBlock(await updateDomainBlock(ctx, toId(req.input.id), changes, userOf(req).account.id));
  });
  app.delete("/api/v1/admin/domain_blocks/:id", { preHandler: write }, async (req) => {
    await removeDomainBlock(ctx, toId(req.input.id), userOf(req).account.id);
    return {};
  });
}
