import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import nodemailer, { type Transporter } from "nodemailer";
import type { Ctx } from "../../context.ts";
import { newId } from "../../db/ids.ts";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

const transports = new WeakMap<Ctx, Transporter>();

function transportFor(ctx: Ctx): Transporter {
  let transport = transports.get(ctx);
  if (!transport) {
    const smtp = ctx.config.smtp;
    transport = smtp
      ? nodemailer.createTransport({
          host: smtp.host,
          port: smtp.port,
          secure: smtp.secure,
          requireTLS: smtp.starttls === "always",
          ignoreTLS: smtp.starttls === "never",
          auth: smtp.user ? { user: smtp.user, pass: smtp.password ?? "" } : undefined,
          connectionTimeout: 15_000,
          socketTimeout: 30_000,
        })
      : nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
    transports.set(ctx, transport);
  }
  return transport;
}

function fromAddress(ctx: Ctx): string {
  return ctx.config.smtp?.from ?? `notifications@${ctx.config.localDomain.replace(/:\d+$/, "")}`;
}

/**
 * Sends one message now: over SMTP when SMTP_SERVER is set, otherwise into the mail folder as an
 * .eml file (logged), so that development servers show their mail.
 */
export async function deliverMail(ctx: Ctx, message: MailMessage): Promise<void> {
  const info = await transportFor(ctx).sendMail({ from: fromAddress(ctx), ...message });
  if (ctx.config.smtp) {
    ctx.log.info({ to: message.to, subject: message.subject, messageId: info.messageId }, "mail sent");
    return;
  }
  await mkdir(ctx.config.mailDir, { recursive: true });
  const file = join(ctx.config.mailDir, `${newId()}.eml`);
  await writeFile(file, info.message as Buffer);
  ctx.log.info({ to: message.to, subject: message.subject, file }, "mail written (no SMTP_SERVER configured)");
}

/** Queues a message; the `mail.deliver` job sends it and retries when the mail server fails. */
export async function queueMail(ctx: Ctx, message: MailMessage): Promise<void> {
  await ctx.jobs.enqueue("mail.deliver", message, { maxAttempts: 8 });
}
