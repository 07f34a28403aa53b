/**
 * Moving between servers, in the settings (Mastodon's /settings/aliases and /settings/migration;
 * Mastodon has no client API for them either). To move here, a user names the old account as an
 * alias of this one, then starts the move on the old server. To move away, the new account must
 * name this one first; the move then needs the current password, and followers follow the new
 * account (remote ones through a Move to their servers).
 */
import type { FastifyInstance } from "fastify";
import type { Ctx } from "../context.ts";
import { ValidationFailed } from "../errors.ts";
import { acctOf } from "../entities/account.ts";
import { addAlias, describeAliases, removeAlias } from "../services/accounts/aliases.ts";
import { findAccountsByIds } from "../services/accounts/lookup.ts";
import { moveAway } from "../services/accounts/move.ts";
import { verifyPassword } from "../services/accounts/passwords.ts";
import { toStringParam } from "../api/params.ts";
import { hiddenFields, html, type SafeHtml } from "./html.ts";
import { renderPage } from "./render.ts";
import { csrfToken, csrfValid, requireSession, type WebUser } from "./session.ts";

const EXPIRED = "This form has expired. Please try again.";

/** A service's refusal as the page's alert; other errors go on to the error handler. */
function refusalOf(error: unknown): string {
  if (error instanceof ValidationFailed) return error.reasons.join(" ");
  throw error;
}

export default async function movingRoutes(app: FastifyInstance, ctx: Ctx) {
  const handle = (session: WebUser) => `@${session.account.username}@${ctx.config.localDomain}`;

  async function aliasesPage(session: WebUser, token: string): Promise<SafeHtml> {
    const aliases = await describeAliases(ctx, session.account);
    const rows = aliases.map(
      (
        alias,
      ) => html`<tr><td>${alias.acct ? `@${alias.acct}` : alias.uri}<br><span class="muted">${alias.uri}</span></td>
<td><form method="post" action="/settings/aliases/remove">${hiddenFields({ authenticity_token: token, uri: alias.uri })}<button type="submit" class="secondary">Remove</button></form></td></tr>`,
    );
    return html`<p>To move an account from another server to ${handle(session)}, name it here first, then start the move on the old server. Naming an account here moves nothing by itself.</p>
${rows.length ? html`<table>${rows}</table>` : html`<p class="muted">No aliases yet.</p>`}
<form method="post" action="/settings/aliases">${hiddenFields({ authenticity_token: token })}
<label for="acct">Handle of the old account</label><input id="acct" type="text" name="acct" placeholder="username@example.social" required>
<button type="submit">Add alias</button></form><nav><a href="/settings">Back</a></nav>`;
  }

  app.get("/settings/aliases", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    const token = csrfToken(ctx, req, reply);
    return renderPage(ctx, reply, { title: "Account aliases", body: await aliasesPage(session, token) });
  });

  app.post("/settings/aliases", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    const token = csrfToken(ctx, req, reply);
    if (!csrfValid(req))
      return renderPage(ctx, reply, {
        title: "Account aliases",
        status: 422,
        alert: EXPIRED,
        body: await aliasesPage(session, token),
      });
    try {
      const account = await addAlias(ctx, session.account, toStringParam(req.input.acct) ?? "");
      return renderPage(ctx, reply, {
        title: "Account aliases",
        notice: "The alias was added.",
        body: await aliasesPage({ ...session, account }, token),
      });
    } catch (error) {
      return renderPage(ctx, reply, {
        title: "Account aliases",
        status: 422,
        alert: refusalOf(error),
        body: await aliasesPage(session, token),
      });
    }
  });

  app.post("/settings/aliases/remove", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    if (csrfValid(req)) await removeAlias(ctx, session.account, toStringParam(req.input.uri) ?? "");
    return reply.redirect("/settings/aliases", 303);
  });

  async function migrationPage(session: WebUser, token: string): Promise<SafeHtml> {
    const [moved] = session.account.moved_to_account_id
      ? await findAccountsByIds(ctx, [session.account.moved_to_account_id])
      : [];
    const status = moved
      ? html`<p class="flash notice" role="status">This account has moved to <strong>@${acctOf(moved)}</strong>. Its profile says so, and its followers were moved there.</p>`
      : "";
    return html`${status}<p>Moving sends your followers to the new account: they follow it instead of ${handle(session)}. Your posts stay here.</p>
<ol><li>On the new account, name ${handle(session)} as an alias (in Mastodon: Preferences › Account › Moving from a different account; here: Account aliases).</li><li>Enter the new account's handle below and confirm with your password.</li></ol>
<form method="post" action="/settings/migration">${hiddenFields({ authenticity_token: token })}
<label for="acct">Handle of the new account</label><input id="acct" type="text" name="acct" placeholder="username@example.social" required>
<label for="current_password">Current password</label><input id="current_password" type="password" name="current_password" autocomplete="current-password" required>
<button type="submit" class="danger">Move</button></form><nav><a href="/settings">Back</a></nav>`;
  }

  app.get("/settings/migration", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    const token = csrfToken(ctx, req, reply);
    return renderPage(ctx, reply, { title: "Move to another account", body: await migrationPage(session, token) });
  });

  app.post("/settings/migration", async (req, reply) => {
    const session = await requireSession(ctx, req, reply);
    if (!session) return reply;
    const token = csrfToken(ctx, req, reply);
    const fail = async (alert: string) =>
      renderPage(ctx, reply, {
        title: "Move to another account",
        status: 422,
        alert,
        body: await migrationPage(session, token),
      });
    if (!csrfValid(req)) return fail(EXPIRED);
    if (!(await verifyPassword(toStringParam(req.input.current_password) ?? "", session.user.encrypted_password)))
      return fail("The current password is not correct.");
    try {
      const target = await moveAway(ctx, session.account, toStringParam(req.input.acct) ?? "");
      const account = { ...session.account, moved_to_account_id: target.id };
      return renderPage(ctx, reply, {
        title: "Move to another account",
        notice: `This account is moving to @${acctOf(target)}.`,
        body: await migrationPage({ ...session, account }, token),
      });
    } catch (error) {
      return fail(refusalOf(error));
    }
  });
}
