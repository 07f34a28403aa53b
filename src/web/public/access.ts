import type { FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import { currentWebUser, type WebUser } from "../session.ts";
import { varyOnAccept } from "../negotiation.ts";

export interface Visitor {
  /** The signed-in user, when the page had to know (the server hides content from visitors). */
  user?: WebUser;
  /** Whether the page is the same for everyone, so shared caches may keep it. */
  shared: boolean;
}

/**
 * Who may read the public pages. With `DISALLOW_UNAUTHENTICATED_API_ACCESS` (and limited
 * federation mode, which implies it) the server shows its content only to its signed-in users,
 * as its API does: a visitor is sent to the sign-in page and back, a feed reader gets 401.
 * Returns undefined when the answer has been sent.
 */
export async function admitVisitor(
  ctx: Ctx,
  req: FastifyRequest,
  reply: FastifyReply,
  kind: "page" | "feed",
): Promise<Visitor | undefined> {
  if (!ctx.config.disallowUnauthenticatedApiAccess) return { shared: true };
  const user = await currentWebUser(ctx, req);
  if (user) return { user, shared: false };
  varyOnAccept(reply);
  reply.header("Cache-Control", "private, no-store");
  if (kind === "feed") {
    await reply.code(401).send({ error: "This server shows its posts only to signed-in users" });
  } else {
    await reply.redirect(`/auth/sign_in?return_to=${encodeURIComponent(req.url)}`, 302);
  }
  return undefined;
}
