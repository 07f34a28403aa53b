import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { Forbidden, UserRequired, ValidationFailed } from "../../errors.ts";
import { sendConfirmation } from "../../services/accounts/confirmation.ts";
import { EMAIL_PATTERN } from "../../services/accounts/validation.ts";
import { emailDomainProblem } from "../../services/accounts/register.ts";
import { toStringParam } from "../params.ts";

export default async function emailRoutes(app: FastifyInstance, ctx: Ctx) {
  // Unconfirmed users call this, so it checks the user itself instead of `user: true`.
  app.post(
    "/api/v1/emails/confirmations",
    { preHandler: app.auth({ scopes: ["write:accounts"] }), config: { throttles: ["confirmation_resend_user", "confirmation_resend_ip"] } },
    async (req) => {
      const viewer = req.viewer!;
      if (!viewer.user) throw new UserRequired();
      let user = viewer.user;
      if (!user.created_by_application_id || user.created_by_application_id !== viewer.applicationId) {
        throw new Forbidden("This method is only available to the application the user originally signed-up with");
      }
      if (user.confirmed_at) throw new Forbidden("This method is only available while the e-mail is awaiting confirmation");
      const email = toStringParam(req.input.email)?.trim();
      if (email && email.toLowerCase() !== user.email.toLowerCase()) {
        if (!EMAIL_PATTERN.test(email)) throw new ValidationFailed("Email is invalid");
        const taken = await ctx.db.kysely
          .selectFrom("users")
          .select("id")
          .where((eb) => eb(eb.fn("lower", ["email"]), "=", email.toLowerCase()))
          .where("id", "!=", user.id)
          .executeTakeFirst();
        if (taken) throw new ValidationFailed("Email has already been taken");
        // The new address must pass the sign-up checks too, or a blocked domain would get in this way.
        const problem = await emailDomainProblem(ctx, email);
        if (problem) throw new ValidationFailed(`Email ${problem.description}`);
        // The account has never been confirmed, so its login address simply changes.
        user = await ctx.db.kysely
          .updateTable("users")
          .set({ email, unconfirmed_email: null, updated_at: new Date().toISOString() })
          .where("id", "=", user.id)
          .returningAll()
          .executeTakeFirstOrThrow();
      }
      await sendConfirmation(ctx, user);
      return {};
    },
  );
}
