import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { ApiError } from "../../errors.ts";
import { webfingerAccount } from "../../services/accounts/webfinger.ts";
import { escapeHtml } from "../../text/escape.ts";
import { toStringParam } from "../params.ts";

/**
 * Discovery, as Mastodon answers it: WebFinger (`acct:` or URL resources → the actor, `self`
 * being the actor's id byte for byte, with the profile page and the subscribe template of the
 * remote-follow page) and host-meta (XRD and JSON) pointing at it. Answers are public and cached
 * for three days, errors for three minutes.
 */
export default async function webfingerRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/.well-known/webfinger", async (req, reply) => {
    reply.header("Access-Control-Allow-Origin", "*");
    reply.header("Vary", "Origin");
    let account;
    try {
      account = await webfingerAccount(ctx, toStringParam(req.input.resource));
    } catch (error) {
      if (error instanceof ApiError) reply.header("Cache-Control", "public, max-age=180");
      throw error;
    }
    reply.header("Cache-Control", "public, max-age=259200");
    reply.type("application/jrd+json; charset=utf-8");
    const profile = account.url ?? `${ctx.config.baseUrl}/@${account.username}`;
    const links: Array<Record<string, string>> = [
      { rel: "http://webfinger.net/rel/profile-page", type: "text/html", href: profile },
      { rel: "self", type: "application/activity+json", href: account.uri },
      // Where the remote-follow page is (web/authorize_interaction.ts), after `self` as in Mastodon.
      {
        rel: "http://ostatus.org/schema/1.0/subscribe",
        template: `${ctx.config.baseUrl}/authorize_interaction?uri={uri}`,
      },
    ];
    return {
      subject: `acct:${account.username}@${ctx.config.localDomain}`,
      aliases: [profile, account.uri],
      links,
    };
  });

  const template = `${ctx.config.baseUrl}/.well-known/webfinger?resource={uri}`;
  app.get("/.well-known/host-meta", async (req, reply) => {
    reply.header("Access-Control-Allow-Origin", "*");
    reply.header("Cache-Control", "public, max-age=259200");
    if (/json/.test(String(req.headers.accept ?? "")) && !/xml/.test(String(req.headers.accept ?? ""))) {
      reply.type("application/json; charset=utf-8");
      return { links: [{ rel: "lrdd", template }] };
    }
    reply.type("application/xrd+xml; charset=utf-8");
    return `<?xml version="1.0" encoding="UTF-8"?>\n<XRD xmlns="http://docs.oasis-open.org/ns/xri/xrd-1.0">\n  <Link rel="lrdd" template="${escapeHtml(template)}"/>\n</XRD>\n`;
  });
  app.get("/.well-known/host-meta.json", async (_req, reply) => {
    reply.header("Access-Control-Allow-Origin", "*");
    reply.header("Cache-Control", "public, max-age=259200");
    return { links: [{ rel: "lrdd", template }] };
  });
}
