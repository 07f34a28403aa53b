import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeTag, serializeTags } from "../../entities/tag.ts";
import { findTag, followedTags, followTag, tagNameOf, unfollowTag } from "../../services/tags/tags.ts";
import { userOf } from "../auth.ts";
import { pageParams, setLinkHeader } from "../pagination.ts";
import { toStringParam } from "../params.ts";

/** Hashtags: a tag's page, following and unfollowing it, the tags a user follows. */
export default async function tagRoutes(app: FastifyInstance, ctx: Ctx) {
  const writeFollows = app.auth({ scopes: ["write:follows", "follow"], user: true });

  app.get("/api/v1/tags/:name", { preHandler: app.auth({ optional: true }) }, async (req) => {
    const name = tagNameOf(toStringParam(req.input.name));
    // A valid name never used here still answers, with an empty week (as Mastodon does).
    const tag = (await findTag(ctx, name)) ?? { id: null, name };
    return serializeTag(ctx, tag, req.viewer?.account ?? undefined);
  });

  app.post("/api/v1/tags/:name/follow", { preHandler: writeFollows }, async (req) => {
    const viewer = userOf(req);
    return serializeTag(
      ctx,
      await followTag(ctx, viewer.account, tagNameOf(toStringParam(req.input.name))),
      viewer.account,
    );
  });

  app.post("/api/v1/tags/:name/unfollow", { preHandler: writeFollows }, async (req) => {
    const viewer = userOf(req);
    return serializeTag(
      ctx,
      await unfollowTag(ctx, viewer.account, tagNameOf(toStringParam(req.input.name))),
      viewer.account,
    );
  });

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
