import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeStatusPage } from "../../entities/status.ts";
import { loadSettings } from "../../services/instance/settings.ts";
import { AuthenticationRequired, NotFound } from "../../errors.ts";
import { findVisibleAccount } from "../../services/accounts/lookup.ts";
import { accountStatuses } from "../../services/timelines/account.ts";
import { tagTimeline } from "../../services/timelines/tag.ts";
import { findTag, tagNameOf, tagsByNames } from "../../services/tags/tags.ts";
import { publicTimeline } from "../../services/timelines/public.ts";
import { homeTimeline, listTimeline } from "../../services/timelines/home.ts";
import { ownList } from "../../services/lists/lists.ts";
import { userOf } from "../auth.ts";
import { pageParams, setLinkHeader } from "../pagination.ts";
import { toBoolean, toId, toStringArray, toStringParam } from "../params.ts";

export default async function timelineRoutes(app: FastifyInstance, ctx: Ctx) {
  const anyone = app.auth({ optional: true, scopes: ["read:statuses"] });
  /** Without the timeline preview, the public timelines need a token (an app token is enough). */
  const previewAuth = async function (this: FastifyInstance, req: FastifyRequest, reply: FastifyReply) {
    await anyone.call(this, req, reply);
    if (req.viewer) return;
    const { values } = await loadSettings(ctx.db.kysely);
    if (!values.timeline_preview) throw new AuthenticationRequired();
  };

  app.get("/api/v1/accounts/:id/statuses", { preHandler: anyone }, async (req, reply) => {
    const viewer = req.viewer?.account ?? undefined;
    const owner = await findVisibleAccount(ctx, toId(req.input.id));
    if (!owner) throw new NotFound();
    const page = pageParams(req.input, 20, 40);
    const options = {
      onlyMedia: toBoolean(req.input.only_media) === true,
      excludeReplies: toBoolean(req.input.exclude_replies) === true,
      excludeReblogs: toBoolean(req.input.exclude_reblogs) === true,
      pinned: toBoolean(req.input.pinned) === true,
      tagged: toStringParam(req.input.tagged),
    };
    const rows = await accountStatuses(ctx, owner, viewer?.id, options, page);
    const keep = ["pinned", "tagged", "only_media", "exclude_replies", "exclude_reblogs"];
    setLinkHeader(ctx.config, req, reply, {
      items: rows,
      cursor: (r) => r.id,
      limit: page.limit,
      nextWhen: "non-empty",
      keep,
    });
    return serializeStatusPage(ctx, rows, viewer, "account");
  });

  app.get("/api/v1/timelines/tag/:hashtag", { preHandler: previewAuth }, async (req, reply) => {
    const viewer = req.viewer?.account ?? undefined;
    const tag = await findTag(ctx, tagNameOf(toStringParam(req.input.hashtag)));
    if (!tag) throw new NotFound();
    const allNames = toStringArray(req.input.all);
    const [anyTags, allTags, noneTags] = await Promise.all([
      tagsByNames(ctx, toStringArray(req.input.any)),
      tagsByNames(ctx, allNames),
      tagsByNames(ctx, toStringArray(req.input.none)),
    ]);
    const page = pageParams(req.input, 20, 40);
    // An `all` tag nobody ever used: no post can have it.
    const rows =
      allTags.length < new Set(allNames.map((n) => n.toLowerCase())).size
        ? []
        : await tagTimeline(
            ctx,
            viewer?.id,
            {
              anyOf: [tag, ...anyTags.filter((t) => t.id !== tag.id)],
              allOf: allTags,
              noneOf: noneTags,
              local: toBoolean(req.input.local) === true,
              remote: toBoolean(req.input.remote) === true,
              onlyMedia: toBoolean(req.input.only_media) === true,
            },
            page,
          );
    const keep = ["local", "remote", "only_media", "any", "all", "none"];
    setLinkHeader(ctx.config, req, reply, {
      items: rows,
      cursor: (r) => r.id,
      limit: page.limit,
      nextWhen: "non-empty",
      keep,
    });
    return serializeStatusPage(ctx, rows, viewer, "public");
  });

  app.get("/api/v1/timelines/public", { preHandler: previewAuth }, async (req, reply) => {
    const viewer = req.viewer?.account ?? undefined;
    const page = pageParams(req.input, 20, 40);
    const rows = await publicTimeline(
      ctx,
      viewer?.id,
      {
        local: toBoolean(req.input.local) === true,
        remote: toBoolean(req.input.remote) === true,
        onlyMedia: toBoolean(req.input.only_media) === true,
      },
      page,
    );
    setLinkHeader(ctx.config, req, reply, {
      items: rows,
      cursor: (r) => r.id,
      limit: page.limit,
      nextWhen: "non-empty",
      keep: ["local", "remote", "only_media"],
    });
    return serializeStatusPage(ctx, rows, viewer, "public");
  });

  app.get(
    "/api/v1/timelines/home",
    { preHandler: app.auth({ scopes: ["read:statuses"], user: true }) },
    async (req, reply) => {
      const viewer = userOf(req).account;
      const page = pageParams(req.input, 20, 40);
      const rows = await homeTimeline(ctx, viewer.id, page);
      setLinkHeader(ctx.config, req, reply, {
        items: rows,
        cursor: (r) => r.id,
        limit: page.limit,
        nextWhen: "non-empty",
      });
      return serializeStatusPage(ctx, rows, viewer, "home");
    },
  );

  app.get(
    "/api/v1/timelines/list/:id",
    { preHandler: app.auth({ scopes: ["read:lists"], user: true }) },
    async (req, reply) => {
      const viewer = userOf(req).account;
      const list = await ownList(ctx, viewer, toId(req.input.id));
      const page = pageParams(req.input, 20, 40);
      const rows = await listTimeline(ctx, list, page);
      setLinkHeader(ctx.config, req, reply, {
        items: rows,
        cursor: (r) => r.id,
        limit: page.limit,
        nextWhen: "non-empty",
      });
      return serializeStatusPage(ctx, rows, viewer, "home");
    },
  );
}
