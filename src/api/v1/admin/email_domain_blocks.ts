import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../../context.ts";
import { serializeAdminEmailDomainBlock } from "../../../entities/email_domain_block.ts";
import {
  createEmailDomainBlock,
  emailDomainBlockOf,
  listEmailDomainBlocks,
  removeEmailDomainBlock,
  withHistories,
} from "../../../services/admin/email_domain_blocks.ts";
import { userOf } from "../../auth.ts";
import { pageParams, setLinkHeader } from "../../pagination.ts";
import { toId, toStringParam } from "../../params.ts";

/**
 * The admin API for e-mail domain blocks (Mastodon's Api::V1::Admin::EmailDomainBlocksController):
 * the Manage Blocks permission and the email_domain_blocks scopes. Blocking a domain blocks its
 * mail servers too (services/admin/email_domain_blocks.ts).
 */
export default async function adminEmailDomainBlockRoutes(app: FastifyInstance, ctx: Ctx) {
  const read = app.auth({ scopes: ["admin:read:email_domain_blocks"], permission: "manage_blocks" });
  const write = app.auth({ scopes: ["admin:write:email_domain_blocks"], permission: "manage_blocks" });

  app.get("/api/v1/admin/email_domain_blocks", { preHandler: read }, async (req, reply) => {
    const page = pageParams(req.input, 100, 200);
    const rows = await listEmailDomainBlocks(ctx, page);
    setLinkHeader(ctx.config, req, reply, { items: rows, cursor: (r) => r.id, limit: page.limit });
    return (await withHistories(ctx, rows)).map(serializeAdminEmailDomainBlock);
  });
  app.get("/api/v1/admin/email_domain_blocks/:id", { preHandler: read }, async (req) => {
    const [block] = await withHistories(ctx, [await emailDomainBlockOf(ctx, toId(req.input.id))]);
    return serializeAdminEmailDomainBlock(block!);
  });
  app.post("/api/v1/admin/email_domain_blocks", { preHandler: write }, async (req) => {
    const row = await createEmailDomainBlock(ctx, userOf(req).account.id, toStringParam(req.input.domain));
    const [block] = await withHistories(ctx, [row]);
    return serializeAdminEmailDomainBlock(block!);
  });
  // Mastodon answers an empty object (render_empty), not the removed block.
  app.delete("/api/v1/admin/email_domain_blocks/:id", { preHandler: write }, async (req) => {
    await removeEmailDomainBlock(ctx, userOf(req).account.id, toId(req.input.id));
    return {};
  });
}
