import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { UserRequired } from "../../errors.ts";
import { resendConfirmation } from "../../services/accounts/resend_confirmation.ts";
import { toStringParam } from "../params.ts";

export default async function emailRoutes(app: FastifyInstance, ctx: Ctx) {
  // Unconfirmed users call this, so it checks the user itself instead of `user: true`.
  app.post(
    "/api/v1/emails/confirmations",
    {
      preHandler: app.auth({ scopes: ["write:accounts"] }),
      config: { throttles: ["confirmation_resend_user", "confirmation_resend_ip"] },
    },
    async (req) => {
      const viewer = req.viewer!;
      if (!viewer.user) throw new UserRequired();
      await resendConfirmation(ctx, viewer.user, viewer.applicationId, toStringParam(req.input.email));
      return {};
    },
  );
}
