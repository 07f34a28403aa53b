import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeTag, serializeTags } from "../../entities/tag.ts";
import { serializeFeaturedTag } from "../../entities/featured_tag.ts";
import { targetAccount } from "../../services/accounts/follow.ts";
import {
  featuredTags,
  featuredTagSuggestions,
  featureTag,
  featureTagNamed,
  findTag,
  followedTags,
  followTag,
  tagNameOf,
  unfeatureTag,
  unfeatureTagNamed,
  unfollowTag,
} from "../../services/tags/tags.ts";
import { userOf } from "../auth.ts";
import { pageParams, setLinkHeader } from "../pagination.ts";
import { toId, toStringParam } from "../params.ts";

/** Hashtags: a tag's page, following and featuring it, the tags a user follows and features. */
export default async function tagRoutes(app: FastifyInstance, ctx: Ctx) {
  const writeFollows = app.auth({ scopes: ["write:follows", "follow"], user: true });

  app.get("/api/v1/tags/:name", { preHandler: app.auth({ optional: true }) }, async (req) => {
    const name = tagNameOf(toStringParam(req.input.name));
    // A valid name never used here still answers, with an empty week (as Mastodon does).
    const tag = (await findTag(ctx, name)) ?? { id: null, name };
    return serializeTag(ctx, tag, req.viewer?.account ?? undefined);
  });

  app.post(
    "/api/v1/tags/:name/follow",
    { preHandler: writeFollows, config: { throttles: ["follows"] } },
    async (req) => {
      const viewer = userOf(req);
      return serializeTag(
        ctx,
        await followTag(ctx, viewer.account, tagNameOf(toStringParam(req.input.name))),
        viewer.account,
      );
    },
  );

  app.post("/api/v1/tags/:name/unfollow", { preHandler: writeFollows }, async (req) => {
    const viewer = userOf(req);
    return serializeTag(
      ctx,
      await unfollowTag(ctx, viewer.account, tagNameOf(toStringParam(req.input.name))),
      viewer.account,
    );
  });

  const readAccounts = app.auth({ scopes: ["read:accounts"], user: true });
  const writeAccounts = app.auth({ scopes: ["write:accounts"], user: true });

  // Mastodon 4.4: feature a tag from its page; the answer is the Tag, with `featuring`.
  app.post("/api/v1/tags/:name/feature", { preHandler: writeAccounts }, async (req) => {
    const viewer = userOf(req);
    const tag = await featureTagNamed(ctx, viewer.account, tagNameOf(toStringParam(req.input.name)));
    return serializeTag(ctx, tag, viewer.account);
  });

  app.post("/api/v1/tags/:name/unfeature", { preHandler: writeAccounts }, async (req) => {
    const viewer = userOf(req);
    const name = tagNameOf(toStringParam(req.input.name));
    // A valid name never used here answers like GET /api/v1/tags/:name, as Mastodon does.
    const tag = (await unfeatureTagNamed(ctx, viewer.account, name)) ?? { id: null, name };
    return serializeTag(ctx, tag, viewer.account);
  });

  app.get("/api/v1/featured_tags", { preHandler: readAccounts }, async (req) => {
    const viewer = userOf(req);
    return (await featuredTags(ctx, viewer.account)).map((f) => serializeFeaturedTag(ctx, viewer.account, f));
  });

  app.post("/api/v1/featured_tags", { preHandler: writeAccounts }, async (req) => {
    const viewer = userOf(req);
    return serializeFeaturedTag(
      ctx,
      viewer.account,
      await featureTag(ctx, viewer.account, toStringParam(req.input.name)),
    );
  });

  app.delete("/api/v1/featured_tags/:id", { preHandler: writeAccounts }, async (req) => {
    await unfeatureTag(ctx, userOf(req).account, toId(req.input.id));
    return {};
  });

  app.get("/api/v1/featured_tags/suggestions", { preHandler: readAccounts }, async (req) => {
    const viewer = userOf(req);
    return serializeTags(ctx, await featuredTagSuggestions(ctx, viewer.account), viewer.account);
  });

  app.get(
    "/api/v1/accounts/:id/featured_tags",
    { preHandler: app.auth({ optional: true, scopes: ["read:accounts"] }) },
    async (req) => {
      const owner = await targetAccount(ctx, toId(req.input.id));
      return (await featuredTags(ctx, owner)).map((f) => serializeFeaturedTag(ctx, owner, f));
    },
  );

  app.get(
    "/api/v1/followed_tags",
    { preHandler: app.auth({ scopes: ["read:follows", "follow"], user: true }) },
    async (req, reply) => {
      const viewer = userOf(req);
      const page = pageParams(req.input, 100, 200);
      const { rows, tags } = await followedTags(ctx, viewer.account, page);
      setLinkHeader(ctx.config, req, reply, {
        items: rows,
        cursor: (r) => r.id,
        limit: page.limit,
        prevParam: "since_id",
      });
      return serializeTags(ctx, tags, viewer.account);
    },
  );
}
