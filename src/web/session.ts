import { randomBytes, timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../context.ts";
import type { UserRow } from "../db/schema.ts";
import {
  createWebSession,
  deleteWebSession,
  findWebSession,
  SESSION_LIFETIME_S,
  type WebUser,
} from "../services/auth/web_sessions.ts";
import { toStringParam } from "../api/params.ts";

const SESSION_COOKIE = "_rookery_session";
const CSRF_COOKIE = "_rookery_csrf";

export function parseCookies(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    try {
      cookies[name] = decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      // A cookie we cannot decode is ignored.
    }
  }
  return cookies;
}

/** A `Set-Cookie` value: HttpOnly, SameSite=Lax, Secure over HTTPS; sent back only below `path`. */
export function cookie(ctx: Ctx, name: string, value: string, maxAge: number | undefined, path = "/"): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${path}`, "HttpOnly", "SameSite=Lax"];
  if (maxAge !== undefined) parts.push(`Max-Age=${maxAge}`);
  if (ctx.config.https) parts.push("Secure");
  return parts.join("; ");
}

/** Adds a `Set-Cookie` header to those `reply` already has. */
export function appendCookie(reply: FastifyReply, value: string): void {
  const existing = reply.getHeader("set-cookie");
  const list = Array.isArray(existing) ? existing : existing ? [String(existing)] : [];
  reply.header("set-cookie", [...list, value]);
}

export type { WebUser };

/** The signed-in user of a browser request, from its session cookie. */
export async function currentWebUser(ctx: Ctx, req: FastifyRequest): Promise<WebUser | undefined> {
  const value = parseCookies(req.headers.cookie)[SESSION_COOKIE];
  if (!value || value.length > 200) return undefined;
  const session = await findWebSession(ctx, value);
  // Suspended or frozen since signing in: signed out at once, in every process (read on each request).
  if (session && (session.user.disabled || session.account.suspended_at)) return undefined;
  return session;
}

/** The signed-in user, or a redirect to the sign-in page that comes back here. */
export async function requireSession(ctx: Ctx, req: FastifyRequest, reply: FastifyReply): Promise<WebUser | undefined> {
  const session = await currentWebUser(ctx, req);
  if (!session) await reply.redirect(`/auth/sign_in?return_to=${encodeURIComponent(req.url.split("?")[0])}`, 303);
  return session;
}

/** Starts a browser session for `user` (a new session id each time, against fixation). */
export async function startWebSession(
  ctx: Ctx,
  req: FastifyRequest,
  reply: FastifyReply,
  user: UserRow,
): Promise<void> {
  const value = randomBytes(32).toString("base64url");
  await createWebSession(ctx, user, value, { ip: req.ip ?? "", userAgent: String(req.headers["user-agent"] ?? "") });
  appendCookie(reply, cookie(ctx, SESSION_COOKIE, value, SESSION_LIFETIME_S));
}

export async function endWebSession(ctx: Ctx, reply: FastifyReply, session: WebUser | undefined): Promise<void> {
  if (session) await deleteWebSession(ctx, session.sessionId);
  appendCookie(reply, cookie(ctx, SESSION_COOKIE, "", 0));
}

/**
 * The CSRF token of this browser (double-submit: an HttpOnly cookie and a hidden form field that
 * must match). Created on first use.
 */
export function csrfToken(ctx: Ctx, req: FastifyRequest, reply: FastifyReply): string {
  const existing = parseCookies(req.headers.cookie)[CSRF_COOKIE];
  if (existing && /^[\w-]{43}$/.test(existing)) return existing;
  const token = randomBytes(32).toString("base64url");
  appendCookie(reply, cookie(ctx, CSRF_COOKIE, token, undefined));
  return token;
}

/** Whether a form post carries the CSRF token of its browser. */
export function csrfValid(req: FastifyRequest): boolean {
  const expected = parseCookies(req.headers.cookie)[CSRF_COOKIE];
  const given = toStringParam(req.input.authenticity_token);
  if (!expected || !given || expected.length !== given.length) return false;
  return timingSafeEqual(Buffer.from(expected), Buffer.from(given));
}

/** Why a signed-in user may not act yet (authorize apps, follow accounts), or undefined when they may. */
export function restrictionOf(session: WebUser): string | undefined {
  if (session.user.disabled || session.account.suspended_at) return "Your account is disabled.";
  if (!session.user.confirmed_at)
    return "Confirm your e-mail address first: follow the link we sent you, then try again.";
  if (!session.user.approved) return "Your account is waiting for a moderator's approval.";
  return undefined;
}
