/**
 * The e-mails a moderation action sends its target (Mastodon's UserMailer#warning, and the welcome
 * an approved sign-up gets): queued with the change, in its transaction, so a rolled-back action
 * sends nothing and a sent mail always describes a change that happened.
 */
import type { Kysely } from "kysely";
import type { Ctx } from "../../context.ts";
import type { Database } from "../../db/schema.ts";
import { loadSettings } from "../instance/settings.ts";
import type { MailMessage } from "../mail/mailer.ts";

/** The job that sends a queued message (services/mail/mailer.ts). */
const MAIL_JOB = "mail.deliver";

/** What each warning's subject says happened, by its action. */
const SUBJECTS: Record<string, (acct: string) => string> = {
  none: (acct) => `Warning for ${acct}`,
  disable: (acct) => `Your account ${acct} has been frozen`,
  sensitive: (acct) => `Media of ${acct} will be marked as sensitive`,
  silence: (acct) => `Your account ${acct} has been limited`,
  suspend: (acct) => `Your account ${acct} has been suspended`,
};

/** What each action means for the user, in a sentence. */
const CONSEQUENCES: Record<string, string> = {
  none: "A moderator has sent you a warning.",
  disable: "You can no longer sign in or use your account, but your profile and other data remain intact.",
  sensitive: "Media you post will be marked as sensitive and hidden behind a click-through warning.",
  silence:
    "Your posts are only shown to people who already follow you; you no longer appear on the public timelines, and people may still follow you.",
  suspend:
    "You can no longer use your account, and your profile and other data are no longer accessible. Your data will be removed later.",
};

async function enqueue(ctx: Ctx, tx: Kysely<Database>, message: MailMessage): Promise<void> {
  await ctx.jobs.enqueueWith(tx, MAIL_JOB, message, { maxAttempts: 8 });
}

/** Queues the warning mail of a moderation action on a local user. */
export async function queueWarningMail(
  ctx: Ctx,
  tx: Kysely<Database>,
  to: string,
  username: string,
  action: string,
  text: string,
  warningId: string,
): Promise<void> {
  const { values } = await loadSettings(tx);
  const acct = `@${username}@${ctx.config.localDomain}`;
  const lines = [CONSEQUENCES[action] ?? CONSEQUENCES.none];
  if (text.trim()) lines.push("", "The moderator's message:", "", text.trim());
  lines.push(
    "",
    // A suspended user cannot sign in, but the sign-in page gives them a pass to this page.
    `You can read this warning, and appeal it, here: ${ctx.config.baseUrl}/disputes/strikes/${warningId}`,
    "",
    `— the moderators of ${values.site_title}`,
  );
  await enqueue(ctx, tx, {
    to,
    subject: `${values.site_title}: ${(SUBJECTS[action] ?? SUBJECTS.none)(acct)}`,
    text: `${lines.join("\n")}\n`,
  });
}

/** Queues the mail telling a user whose sign-up was approved that they can sign in. */
export async function queueApprovalMail(ctx: Ctx, tx: Kysely<Database>, to: string, username: string): Promise<void> {
  const { values } = await loadSettings(tx);
  await enqueue(ctx, tx, {
    to,
    subject: `${values.site_title}: Your account has been approved`,
    text:
      `Welcome to ${values.site_title}, @${username}!\n\nA moderator has approved your sign-up: you can sign in now at ` +
      `${ctx.config.baseUrl}/auth/sign_in\n`,
  });
}
