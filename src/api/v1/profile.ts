import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeCredentialAccount } from "../../entities/account.ts";
import { removeProfileImage } from "../../services/accounts/profile.ts";
import { userSettings } from "../../db/columns.ts";
import { userOf } from "../auth.ts";

export default async function profileRoutes(app: FastifyInstance, ctx: Ctx) {
  for (const kind of ["avatar", "header"] as const) {
    app.delete(
      `/api/v1/profile/${kind}`,
      { preHandler: app.auth({ scopes: ["write:accounts"], user: true }) },
      async (req) => {
        const viewer = userOf(req);
        const account = await removeProfileImage(ctx, viewer.account, kind);
        return serializeCredentialAccount(ctx, account, viewer.user, viewer.role);
      },
    );
  }

  app.get("/api/v1/preferences", { preHandler: app.auth({ scopes: ["read:accounts"], user: true }) }, async (req) => {
    const settings = userSettings(userOf(req).user);
    return {
      "posting:default:visibility": settings.default_privacy,
      "posting:default:sensitive": settings.default_sensitive,
      "posting:default:language": settings.default_language,
      "reading:expand:media": settings.expand_media,
      "reading:expand:spoilers": settings.expand_spoilers,
      "reading:autoplay:gifs": settings.autoplay_gifs,
    };
  });
}
