import type { FastifyReply } from "fastify";
import type { Ctx } from "../context.ts";
import { loadSettings } from "../services/instance/settings.ts";
import { page, type SafeHtml } from "./html.ts";

export interface RenderOptions {
  title: string;
  body: SafeHtml;
  status?: number;
  alert?: string;
  notice?: string;
  /** A page apps open in a small pop-up window (see PageOptions.popup). */
  popup?: boolean;
  /** A page of tables (the admin area). */
  wide?: boolean;
}

/** Sends a server-rendered page with the headers every page carries (no caching, no framing, no scripts). */
export async function renderPage(ctx: Ctx, reply: FastifyReply, options: RenderOptions): Promise<FastifyReply> {
  const { values } = await loadSettings(ctx.db.kysely);
  return reply
    .code(options.status ?? 200)
    .header("Cache-Control", "no-store")
    .header("X-Frame-Options", "DENY")
    .header("X-Content-Type-Options", "nosniff")
    .header("Referrer-Policy", "same-origin")
    .header(
      "Content-Security-Policy",
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'",
    )
    .type("text/html; charset=utf-8")
    .send(page({ ...options, siteTitle: values.site_title }));
}

/**
 * A path on this site to return to after signing in; anything else (other hosts, `//x`, `/\t/x`
 * which browsers read as `//x`, control characters) falls back.
 */
export function safeReturnPath(value: string | undefined, fallback = "/settings"): string {
  const hasControl = [...(value ?? "")].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
  if (!value || !value.startsWith("/") || value.length > 4000 || hasControl || value.includes("\\")) return fallback;
  const base = "http://rookery.invalid";
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return fallback;
  }
  const path = `${url.pathname}${url.search}${url.hash}`;
  // Normalising may itself produce `//host` (`/.//host`): check what is returned, not only what came in.
  if (url.origin !== base || !path.startsWith("/") || path.startsWith("//") || path.startsWith("/\\")) return fallback;
  return path;
}
