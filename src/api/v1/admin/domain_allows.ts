import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../../context.ts";
import { serializeAdminDomainAllow } from "../../../entities/domain_allow.ts";
import { allowDomain, domainAllowOf, listDomainAllows, unallowDomain } from "../../../services/admin/domain_allows.ts";
import { userOf } from "../../auth.ts";
import { pageParams, setLinkHeader } from "../../pagination.ts";
import { toId, toStringParam } from "../../params.ts";

/**
 * The admin API for the allow-list of limited federation mode (Mastodon's
 * Api::V1::Admin::DomainAllowsController): the Manage Federation permission and the domain_allows
 * scopes. The list can be kept whether or not the mode is on.
 */
export default async function adminDomainAllowRoutes(app: FastifyInstance, ctx: Ctx) {
  const read = app.auth({ scopes: ["admin:read:domain_allows"], permission: "manage_federation" });
  const write = app.auth({ scopes: ["admin:write:domain_allows"], permission: "manage_federation" });

  app.get("/api/v1/admin/domain_allows", { preHandler: read }, async (req, reply) => {
    const page = pageParams(req.input, 100, 200);
    const rows = await listDomainAllows(ctx, page);
    setLinkHeader(ctx.config, req, reply, { items: rows, cursor: (r) => r.id, limit: page.limit });
    return rows.map(serializeAdminDomainAllow);
  });
  app.get("/api/v1/admin/domain_allows/:id", { preHandler: read }, async (req) =>
    serializeAdminDomainAllow(await domainAllowOf(ctx, toId(req.input.id))),
  );
  // An already allowed domain answers its existing allow with 200, as Mastodon does.
  app.post("/api/v1/admin/domain_allows", { preHandler: write }, async (req) =>
    serializeAdminDomainAllow(await allowDomain(ctx, toStringParam(req.input.domain), userOf(req).account.id)),
  );
  // Mastodon answers an empty object (render_empty), not the removed allow.
  app.delete("/api/v1/admin/domain_allows/:id", { preHandler: write }, async (req) => {
    await unallowDomain(ctx, toId(req.input.id), userOf(req).account.id);
    return {};
  });
}
