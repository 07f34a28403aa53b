/**
 * Which local account a WebFinger resource names, as Mastodon reads it: `acct:user@domain` or a
 * bare `user@domain` (the domain this server's LOCAL_DOMAIN or WEB_DOMAIN, any case), or the URL
 * of a profile or actor on this server (`/@user`, `/users/user`). Anything else is a bad request;
 * a resource of another server or an unknown user is not found.
 */
import type { Ctx } from "../../context.ts";
import type { AccountRow } from "../../db/schema.ts";
import { BadRequest, Gone, NotFound } from "../../errors.ts";
import { findLocalAccount } from "./lookup.ts";

function usernameOf(ctx: Ctx, resource: string): string {
  const ours = (host: string) =>
    [ctx.config.localDomain, ctx.config.webDomain].some((d) => d.toLowerCase() === host.toLowerCase());
  if (/^https?:\/\//i.test(resource)) {
    let url: URL;
    try {
      url = new URL(resource);
    } catch {
      throw new BadRequest("Invalid resource");
    }
    if (!ours(url.host)) throw new NotFound();
    const match = /^\/(?:@|users\/)([^/]+)\/?$/.exec(url.pathname);
    if (!match) throw new NotFound();
    try {
      return decodeURIComponent(match[1]!);
    } catch {
      throw new BadRequest("Invalid resource");
    }
  }
  if (!resource.includes("@")) throw new BadRequest("Invalid resource");
  const parts = resource
    .replace(/^acct:/i, "")
    .replace(/^@/, "")
    .split("@");
  const username = parts[0] ?? "";
  const domain = parts[parts.length - 1] ?? "";
  if (!username || parts.length !== 2) throw new NotFound();
  if (!ours(domain)) throw new NotFound();
  return username;
}

/** The local account `resource` names (BadRequest, NotFound). */
export async function webfingerAccount(ctx: Ctx, resource: string | undefined): Promise<AccountRow> {
  if (!resource) throw new BadRequest("Missing resource parameter");
  const account = await findLocalAccount(ctx, usernameOf(ctx, resource.trim()));
  if (!account) throw new NotFound();
  // A deleted account is gone for good (Mastodon: 410); its username stays taken.
  if (account.deleted_at) throw new Gone();
  return account;
}
