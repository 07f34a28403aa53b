/**
 * Deleting one's account from the settings (Mastodon's /settings/delete): the current password
 * confirms it. What follows is services/accounts/deletion.ts: signed out everywhere at once,
 * every server that knows the account told, the content removed by a job, the username kept.
 */
import type { FastifyInstance } from "fastify";
import type { Ctx } from "../context.ts";
import { deleteOwnAccount } from "../services/accounts/deletion.ts";
import { verifyPassword } from "../services/accounts/passwords.ts";
import { toStringParam } from "../api/params.ts";
import { hiddenFields, html } from "./html.ts";
import { renderPage } from "./render.ts";
import { csrfToken, csrfValid, requireSession, type WebUser } from "./session.ts";

const TITLE = "Delete account";

function form(ctx: Ctx, session: WebUser, token: string) {
  return html`<p>This deletes <strong>@${session.account.username}@${ctx.config.localDomain}</strong> for good: your posts, media, follows and lists are removed, other servers are told the account is gone, and you cannot sign in again. The username stays taken. This cannot be undone.</p>
<p>To move your followers to another account first, use <a href="/settings/migration">Move to another account</a>.</p>
<form method="post" action="/settings/delete">${hiddenFields({ authenticity_token: token })}
<label for="current_password">Current password</label><input id="current_password" type="password" name="current_password" autocomplete="current-password" required>
<button type="submit" class="danger">Delete my account</button></form><nav><a href="/settings">Back</a></nav>`;
}

export default async function deleteAccountRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/settings/delete", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    return renderPage(ctx, reply, { title: TITLE, body: form(ctx, session, csrfToken(ctx, req, reply)) });
  });

  app.post("/settings/delete", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    const token = csrfToken(ctx, req, reply);
    const fail = (alert: string) =>
      renderPage(ctx, reply, { title: TITLE, status: 422, alert, body: form(ctx, session, token) });
    if (!csrfValid(req)) return fail("This form has expired. Please try again.");
    if (!(await verifyPassword(toStringParam(req.input.current_password) ?? "", session.user.encrypted_password)))
      return fail("The current password is not correct.");
    await deleteOwnAccount(ctx, session.user, session.account);
    return renderPage(ctx, reply, {
      title: TITLE,
      notice: "Your account is being deleted. You have been signed out everywhere.",
      body: html`<nav><a href="/">Home</a></nav>`,
    });
  });
}
