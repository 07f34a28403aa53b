import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../../context.ts";
import { serializeAdminCanonicalEmailBlock } from "../../../entities/canonical_email_block.ts";
import {
  canonicalEmailBlockOf,
  canonicalEmailBlocksMatching,
  createCanonicalEmailBlock,
  listCanonicalEmailBlocks,
  removeCanonicalEmailBlock,
} from "../../../services/admin/canonical_email_blocks.ts";
import { userOf } from "../../auth.ts";
import { pageParams, setLinkHeader } from "../../pagination.ts";
import { requireString, toId, toStringParam } from "../../params.ts";

/**
 * The admin API for canonical e-mail blocks (Mastodon's Api::V1::Admin::CanonicalEmailBlocksController):
 * the Manage Blocks permission and the canonical_email_blocks scopes; `test` only reads, so it
 * takes the read scope although it is a POST, as in Mastodon.
 */
export default async function adminCanonicalEmailBlockRoutes(app: FastifyInstance, ctx: Ctx) {
  const read = app.auth({ scopes: ["admin:read:canonical_email_blocks"], permission: "manage_blocks" });
  const write = app.auth({ scopes: ["admin:write:canonical_email_blocks"], permission: "manage_blocks" });

  app.get("/api/v1/admin/canonical_email_blocks", { preHandler: read }, async (req, reply) => {
    const page = pageParams(req.input, 100, 200);
    const rows = await listCanonicalEmailBlocks(ctx, page);
    setLinkHeader(ctx.config, req, reply, { items: rows, cursor: (r) => r.id, limit: page.limit });
    return rows.map(serializeAdminCanonicalEmailBlock);
  });
  app.post("/api/v1/admin/canonical_email_blocks/test", { preHandler: read }, async (req) =>
    (await canonicalEmailBlocksMatching(ctx.db.kysely, requireString(req.input, "email"))).map(
      serializeAdminCanonicalEmailBlock,
    ),
  );
  app.get("/api/v1/admin/canonical_email_blocks/:id", { preHandler: read }, async (req) =>
    serializeAdminCanonicalEmailBlock(await canonicalEmailBlockOf(ctx, toId(req.input.id))),
  );
  app.post("/api/v1/admin/canonical_email_blocks", { preHandler: write }, async (req) =>
    serializeAdminCanonicalEmailBlock(
      await createCanonicalEmailBlock(ctx, userOf(req).account.id, {
        email: toStringParam(req.input.email),
        canonicalEmailHash: toStringParam(req.input.canonical_email_hash),
      }),
    ),
  );
  app.delete("/api/v1/admin/canonical_email_blocks/:id", { preHandler: write }, async (req) => {
    await removeCanonicalEmailBlock(ctx, userOf(req).account.id, toId(req.input.id));
    return {};
  });
}
