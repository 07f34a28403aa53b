import type { FastifyInstance } from "fastify";
import type { Ctx } from "../context.ts";
import { toStringParam } from "../api/params.ts";
import { changePassword, verifyPassword } from "../services/accounts/passwords.ts";
import { PASSWORD_MAX, PASSWORD_MIN } from "../services/accounts/validation.ts";
import { loadSettings } from "../services/instance/settings.ts";
import { authorizedApplications, revokeAuthorization } from "../services/auth/authorizations.ts";
import { paragraphsHtml } from "../entities/instance.ts";
import { hiddenFields, html, SafeHtml } from "./html.ts";
import { renderPage } from "./render.ts";
import { mayAdminister } from "./admin/frame.ts";
import { csrfToken, csrfValid, currentWebUser, requireSession } from "./session.ts";

function passwordForm(token: string) {
  return html`<form method="post" action="/settings/password">${hiddenFields({ authenticity_token: token })}
<label for="current_password">Current password</label><input id="current_password" type="password" name="current_password" autocomplete="current-password" required>
<label for="password">New password</label><input id="password" type="password" name="password" autocomplete="new-password" minlength="${PASSWORD_MIN}" maxlength="${PASSWORD_MAX}" required>
<label for="password_confirmation">Confirm new password</label><input id="password_confirmation" type="password" name="password_confirmation" autocomplete="new-password" required>
<button type="submit">Change password</button></form><nav><a href="/settings">Back</a></nav>`;
}

export default async function webSettingsRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/", async (req, reply) => {
    const { values } = await loadSettings(ctx.db.kysely);
    const session = await currentWebUser(ctx, req);
    return renderPage(ctx, reply, {
      title: values.site_title,
      body: html`${values.site_short_description ? new SafeHtml(paragraphsHtml(values.site_short_description)) : html`<p>A Rookery server on ${ctx.config.localDomain}. Use any Mastodon app to sign in.</p>`}
<nav>${session ? html`<a href="/settings">Your account</a>` : html`<a href="/auth/sign_in">Sign in</a>${values.registrations_mode !== "none" ? html`<a href="/auth/sign_up">Create an account</a>` : ""}`}</nav>`,
    });
  });

  app.get("/settings", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    const token = csrfToken(ctx, req, reply);
    const { user, account } = session;
    const admin = (await mayAdminister(ctx, user)) ? html`<a href="/admin">Administration</a>` : "";
    const pending = !user.confirmed_at
      ? html`<div class="flash" role="alert">Confirm your e-mail address: we sent a link to ${user.unconfirmed_email ?? user.email}.
<form method="post" action="/auth/confirmation/resend">${hiddenFields({ authenticity_token: token })}<button type="submit" class="secondary">Send the link again</button></form></div>`
      : !user.approved
        ? html`<div class="flash" role="status">Your account is waiting for a moderator's approval.</div>`
        : "";
    return renderPage(ctx, reply, {
      title: "Your account",
      body: html`${pending}<p>Signed in as <strong>@${account.username}@${ctx.config.localDomain}</strong> (${user.email}).</p>
<nav><a href="/settings/password">Change password</a><a href="/oauth/authorized_applications">Authorized apps</a><a href="/settings/aliases">Account aliases</a><a href="/settings/migration">Move to another account</a><a href="/settings/export">Export</a><a href="/settings/imports">Import</a><a href="/settings/archive">Your archive</a><a href="/settings/delete">Delete account</a><a href="/disputes/strikes">Your strikes</a>${admin}</nav>
<form method="post" action="/auth/sign_out">${hiddenFields({ authenticity_token: token })}<button type="submit" class="secondary">Sign out</button></form>`,
    });
  });

  app.get("/settings/password", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    return renderPage(ctx, reply, { title: "Change password", body: passwordForm(csrfToken(ctx, req, reply)) });
  });

  app.post("/settings/password", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    const token = csrfToken(ctx, req, reply);
    const fail = (alert: string, status = 422) =>
      renderPage(ctx, reply, { title: "Change password", status, alert, body: passwordForm(token) });
    if (!csrfValid(req)) return fail("This form has expired. Please try again.");
    const password = toStringParam(req.input.password) ?? "";
    if (!(await verifyPassword(toStringParam(req.input.current_password) ?? "", session.user.encrypted_password)))
      return fail("The current password is not correct.");
    const length = [...password].length;
    if (length < PASSWORD_MIN) return fail(`The new password is too short (minimum is ${PASSWORD_MIN} characters).`);
    if (length > PASSWORD_MAX) return fail(`The new password is too long (maximum is ${PASSWORD_MAX} characters).`);
    if (password !== toStringParam(req.input.password_confirmation))
      return fail("The confirmation does not match the new password.");
    // Other browsers signed in with the old password are signed out; this one stays.
    await changePassword(ctx, session.user.id, password, session.sessionId);
    return renderPage(ctx, reply, {
      title: "Change password",
      notice: "Your password has been changed.",
      body: html`<nav><a href="/settings">Back</a></nav>`,
    });
  });

  app.get("/oauth/authorized_applications", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    const token = csrfToken(ctx, req, reply);
    const apps = await authorizedApplications(ctx, session.user.id);
    const list = apps.map(
      (
        a,
      ) => html`<tr><td><strong>${a.name}</strong>${a.website ? html`<br><span class="muted">${a.website}</span>` : ""}<br><span class="muted">${a.scopes.join(" ")}${a.lastUsedAt ? ` · last used ${a.lastUsedAt.slice(0, 10)}` : ""}</span></td>
<td><form method="post" action="/oauth/authorized_applications/${a.id}/revoke">${hiddenFields({ authenticity_token: token })}<button type="submit" class="danger">Revoke</button></form></td></tr>`,
    );
    return renderPage(ctx, reply, {
      title: "Authorized apps",
      body: html`${list.length ? html`<table>${list}</table>` : html`<p>No app has access to your account.</p>`}<nav><a href="/settings">Back</a></nav>`,
    });
  });

  app.post("/oauth/authorized_applications/:id/revoke", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    if (csrfValid(req)) {
      await revokeAuthorization(ctx, session.user.id, String((req.params as { id: string }).id));
    }
    return reply.redirect("/oauth/authorized_applications", 303);
  });
}
