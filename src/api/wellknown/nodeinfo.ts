import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { loadSettings } from "../../services/instance/settings.ts";
import { activeUserCount, localStatusCount, localUserCount } from "../../services/instance/stats.ts";
import { ROOKERY_VERSION } from "../../version.ts";

const SCHEMAS = ["2.0", "2.1"] as const;

export default async function nodeinfoRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/.well-known/nodeinfo", async (_req, reply) => {
    reply.header("Cache-Control", "public, max-age=259200");
    return {
      links: SCHEMAS.map((version) => ({
        rel: `http://nodeinfo.diaspora.software/ns/schema/${version}`,
        href: `${ctx.config.baseUrl}/nodeinfo/${version}`,
      })),
    };
  });

  for (const version of SCHEMAS) {
    app.get(`/nodeinfo/${version}`, async (_req, reply) => {
      const [{ values }, total, activeMonth, activeHalfyear, localPosts] = await Promise.all([
        loadSettings(ctx.db.kysely),
        localUserCount(ctx.db),
        activeUserCount(ctx.db, 30),
        activeUserCount(ctx.db, 180),
        localStatusCount(ctx.db),
      ]);
      const software: Record<string, string> = { name: "rookery", version: ROOKERY_VERSION };
      if (version === "2.1") {
        software.repository = ctx.config.sourceUrl;
        software.homepage = ctx.config.sourceUrl;
      }
      reply.header("Cache-Control", "public, max-age=1800");
      reply.type(`application/json; profile="http://nodeinfo.diaspora.software/ns/schema/${version}#"; charset=utf-8`);
      return {
        version,
        software,
        protocols: ["activitypub"],
        services: { outbound: [], inbound: [] },
        usage: { users: { total, activeMonth, activeHalfyear }, localPosts },
        openRegistrations: values.registrations_mode !== "none",
        metadata: { nodeName: values.site_title, nodeDescription: values.site_short_description },
      };
    });
  }
}
