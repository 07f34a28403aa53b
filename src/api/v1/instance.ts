import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { paragraphsHtml, serializeInstanceV1, serializeRules } from "../../entities/instance.ts";
import { NotFound } from "../../errors.ts";
import { loadInstanceFacts, loadInstanceStats } from "../../services/instance/facts.ts";
import { loadSettings, type DomainBlocksVisibility } from "../../services/instance/settings.ts";
import { publicDomainBlocks } from "../../services/admin/domain_blocks.ts";
import { serializePublicDomainBlock } from "../../entities/domain_block.ts";
import { knownDomains, weeklyActivity } from "../../services/instance/stats.ts";
import { languageList } from "../../text/languages.ts";
import { translationLanguages } from "../../services/translation/languages.ts";

const CACHE_5_MIN = "public, max-age=300, must-revalidate";

export default async function instanceV1Routes(app: FastifyInstance, ctx: Ctx) {
  const open = app.auth({ optional: true, alwaysPublic: true });
  // Peers and activity reveal who this server talks to; limited-federation servers keep them to users.
  const peersAuth = app.auth({ optional: true, alwaysPublic: !ctx.config.limitedFederationMode });

  app.get("/api/v1/instance", { preHandler: open }, async (_req, reply) => {
    const [facts, stats] = await Promise.all([loadInstanceFacts(ctx), loadInstanceStats(ctx)]);
    reply.header("Cache-Control", CACHE_5_MIN);
    return serializeInstanceV1(ctx, facts, stats);
  });

  app.get("/api/v1/instance/peers", { preHandler: peersAuth }, async (_req, reply) => {
    const { values } = await loadSettings(ctx.db.kysely);
    if (!values.peers_api_enabled || ctx.config.limitedFederationMode) throw new NotFound("Not Found");
    reply.header("Cache-Control", CACHE_5_MIN);
    return knownDomains(ctx.db);
  });

  app.get("/api/v1/instance/activity", { preHandler: peersAuth }, async (_req, reply) => {
    const { values } = await loadSettings(ctx.db.kysely);
    if (!values.activity_api_enabled || ctx.config.limitedFederationMode) throw new NotFound("Not Found");
    reply.header("Cache-Control", CACHE_5_MIN);
    return weeklyActivity(ctx.db);
  });

  app.get("/api/v1/instance/domain_blocks", { preHandler: open }, async (req) => {
    const { values } = await loadSettings(ctx.db.kysely);
    const signedIn = !!req.viewer?.user;
    const shownTo = (setting: DomainBlocksVisibility) => setting === "all" || (setting === "users" && signedIn);
    if (!shownTo(values.show_domain_blocks)) throw new NotFound("Not Found");
    const withComment = shownTo(values.show_domain_blocks_rationale);
    return (await publicDomainBlocks(ctx)).map((row) => serializePublicDomainBlock(row, withComment));
  });

  app.get("/api/v1/instance/rules", { preHandler: open }, async (_req, reply) => {
    const { values } = await loadSettings(ctx.db.kysely);
    reply.header("Cache-Control", CACHE_5_MIN);
    return serializeRules(values.rules);
  });

  app.get("/api/v1/instance/extended_description", { preHandler: open }, async (_req, reply) => {
    const { values, updatedAt } = await loadSettings(ctx.db.kysely);
    reply.header("Cache-Control", CACHE_5_MIN);
    const text = values.site_extended_description;
    return { updated_at: text ? (updatedAt.site_extended_description ?? null) : null, content: paragraphsHtml(text) };
  });

  app.get("/api/v1/instance/translation_languages", { preHandler: open }, async (_req, reply) => {
    reply.header("Cache-Control", CACHE_5_MIN);
    return translationLanguages(ctx);
  });

  app.get("/api/v1/instance/languages", { preHandler: open }, async (_req, reply) => {
    reply.header("Cache-Control", CACHE_5_MIN);
    return languageList();
  });
}
