import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { Unauthorized } from "../../errors.ts";
import { findVisibleStatus } from "../../services/visibility/find.ts";
import { translateStatus } from "../../services/translation/translate.ts";
import { toId, toStringParam } from "../params.ts";

/** The client's preferred language from `Accept-Language` (highest q first), for callers without a locale. */
export function acceptedLanguage(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const ranked = header
    .split(",")
    .map((part, order) => {
      const [tag, ...params] = part.trim().split(";");
      const q = params.map((p) => /^\s*q\s*=\s*([\d.]+)\s*$/i.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), order };
    })
    .filter((entry) => entry.q > 0 && /^[a-z]{2,3}(?:[-_][a-z0-9]{1,8})*$/i.test(entry.tag))
    .sort((a, b) => b.q - a.q || a.order - b.order);
  return ranked[0]?.tag;
}

export default async function translationRoutes(app: FastifyInstance, ctx: Ctx) {
  // An app token may translate public statuses too (Mastodon only asks for the scope).
  app.post("/api/v1/statuses/:id/translate", { preHandler: app.auth({ scopes: ["read:statuses"] }) }, async (req) => {
    const viewer = req.viewer;
    if (!viewer) throw new Unauthorized();
    const status = await findVisibleStatus(ctx, toId(req.input.id), viewer.account?.id);
    const locale = viewer.user?.locale || acceptedLanguage(req.headers["accept-language"]);
    return translateStatus(ctx, status, locale, toStringParam(req.input.lang));
  });
}
