/**
 * POST /api/v1/emails/confirmations: an unconfirmed user asks for the confirmation mail again,
 * through the app it signed up with, optionally correcting its address first.
 */
import type { Ctx } from "../../context.ts";
import type { UserRow } from "../../db/schema.ts";
import { Forbidden, ValidationFailed } from "../../errors.ts";
import { sendConfirmation } from "./confirmation.ts";
import { emailDomainProblem } from "./register.ts";
import { EMAIL_PATTERN } from "./validation.ts";

export async function resendConfirmation(
  ctx: Ctx,
  user: UserRow,
  applicationId: string | null,
  newEmail: string | undefined,
): Promise<void> {
  if (!user.created_by_application_id || user.created_by_application_id !== applicationId) {
    throw new Forbidden("This method is only available to the application the user originally signed-up with");
  }
  if (user.confirmed_at) throw new Forbidden("This method is only available while the e-mail is awaiting confirmation");
  const email = newEmail?.trim();
  let recipient = user;
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
    recipient = await ctx.db.kysely
      .updateTable("users")
      .set({ email, unconfirmed_email: null, updated_at: new Date().toISOString() })
      .where("id", "=", user.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }
  await sendConfirmation(ctx, recipient);
}
