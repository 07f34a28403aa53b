import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Ctx } from "../context.ts";
import { ApiError, ValidationFailed } from "../errors.ts";
import { confirmEmail, sendConfirmation } from "../services/accounts/confirmation.ts";
import { registerUser } from "../services/accounts/register.ts";
import { authenticateUser, canSignIn } from "../services/auth/oauth.ts";
import { loadSettings } from "../services/instance/settings.ts";
import type { ErrorDetails } from "../services/accounts/validation.ts";
import { applyThrottles, ENDPOINT_THROTTLES } from "../api/rate_limit.ts";
import { toStringParam } from "../api/params.ts";
import { hiddenFields, html } from "./html.ts";
import { renderPage, safeReturnPath } from "./render.ts";
import { csrfToken, csrfValid, currentWebUser, endWebSession, startWebSession } from "./session.ts";
import { openDisputesPass } from "./disputes.ts";

const INVALID_LOGIN = "Invalid e-mail address or password.";
const EXPIRED_FORM = "This form has expired. Please try again.";

function signInForm(token: string, returnTo: string, email = "") {
  return html`<form method="post" action="/auth/sign_in">
${hiddenFields({ authenticity_token: token, return_to: returnTo })}
<label for="email">E-mail address</label><input id="email" type="email" name="email" value="${email}" autocomplete="username" required autofocus>
<label for="password">Password</label><input id="password" type="password" name="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>
<nav><a href="/auth/sign_up">Create an account</a></nav>`;
}

/** Refuses the request with a page when the sign-in or sign-up throttle is exhausted. */
async function throttled(
  ctx: Ctx,
  req: FastifyRequest,
  reply: FastifyReply,
  name: "sign_in" | "sign_up",
): Promise<boolean> {
  try {
    await applyThrottles(ctx.rateLimits, [ENDPOINT_THROTTLES[name]], req, reply, undefined);
    return false;
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 429) throw error;
    await renderPage(ctx, reply, {
      title: "Too many attempts",
      status: 429,
      body: html`<p>Too many attempts from your network. Please wait a few minutes and try again.</p>`,
    });
    return true;
  }
}

function signUpForm(token: string, values: Record<string, string>, errors: ErrorDetails, askReason: boolean) {
  const problem = (field: string) =>
    errors[field] ? html`<p class="flash" role="alert">${errors[field].map((e) => e.description).join(", ")}</p>` : "";
  return html`<form method="post" action="/auth/sign_up">
${hiddenFields({ authenticity_token: token, locale: "en" })}
<label for="username">Username</label><input id="username" type="text" name="username" value="${values.username ?? ""}" autocomplete="username" required>${problem("username")}
<label for="email">E-mail address</label><input id="email" type="email" name="email" value="${values.email ?? ""}" autocomplete="email" required>${problem("email")}
<label for="password">Password</label><input id="password" type="password" name="password" autocomplete="new-password" minlength="8" required>${problem("password")}
<label for="password_confirmation">Confirm password</label><input id="password_confirmation" type="password" name="password_confirmation" autocomplete="new-password" required>${problem("password_confirmation")}
${askReason ? html`<label for="reason">Why do you want to join?</label><textarea id="reason" name="reason" rows="3">${values.reason ?? ""}</textarea>${problem("reason")}` : ""}
<label><input type="checkbox" name="agreement" value="1"> I agree to the server rules and terms</label>${problem("agreement")}
<button type="submit">Sign up</button></form>
<nav><a href="/auth/sign_in">Sign in instead</a></nav>`;
}

export default async function webAuthRoutes(app: FastifyInstance, ctx: Ctx) {
  app.get("/auth/sign_in", async (req, reply) => {
    const returnTo = safeReturnPath(toStringParam(req.input.return_to));
    if (await currentWebUser(ctx, req)) return reply.redirect(returnTo);
    return renderPage(ctx, reply, { title: "Sign in", body: signInForm(csrfToken(ctx, req, reply), returnTo) });
  });

  app.post("/auth/sign_in", async (req, reply) => {
    const returnTo = safeReturnPath(toStringParam(req.input.return_to));
    const email = toStringParam(req.input.email) ?? "";
    const token = csrfToken(ctx, req, reply);
    if (!csrfValid(req))
      return renderPage(ctx, reply, {
        title: "Sign in",
        status: 422,
        alert: EXPIRED_FORM,
        body: signInForm(token, returnTo, email),
      });
    if (await throttled(ctx, req, reply, "sign_in")) return reply;
    const user = await authenticateUser(ctx, email, toStringParam(req.input.password) ?? "");
    if (!user)
      return renderPage(ctx, reply, {
        title: "Sign in",
        status: 401,
        alert: INVALID_LOGIN,
        body: signInForm(token, returnTo, email),
      });
    if (!(await canSignIn(ctx, user))) {
      // A suspended or frozen user may still read the moderators' decisions and appeal them.
      const disputes = await openDisputesPass(ctx, req, reply, user);
      return renderPage(ctx, reply, {
        title: "Sign in",
        status: 403,
        alert: "Your account is disabled.",
        body: html`${disputes}${signInForm(token, returnTo, email)}`,
      });
    }
    await startWebSession(ctx, req, reply, user);
    return reply.redirect(returnTo, 303);
  });

  app.post("/auth/sign_out", async (req, reply) => {
    const session = await currentWebUser(ctx, req);
    if (!csrfValid(req))
      return renderPage(ctx, reply, {
        title: "Sign out",
        status: 422,
        alert: EXPIRED_FORM,
        body: html`<nav><a href="/settings">Back</a></nav>`,
      });
    await endWebSession(ctx, reply, session);
    return reply.redirect(
      `/auth/sign_in?return_to=${encodeURIComponent(safeReturnPath(toStringParam(req.input.return_to)))}`,
      303,
    );
  });

  app.get("/auth/sign_up", async (req, reply) => {
    const { values } = await loadSettings(ctx.db.kysely);
    if (values.registrations_mode === "none") {
      return renderPage(ctx, reply, {
        title: "Sign up",
        status: 403,
        body: html`<p>This server is not accepting new accounts.</p>${values.closed_registrations_message ? html`<p>${values.closed_registrations_message}</p>` : ""}`,
      });
    }
    return renderPage(ctx, reply, {
      title: "Sign up",
      body: signUpForm(csrfToken(ctx, req, reply), {}, {}, values.registrations_mode === "approved"),
    });
  });

  app.post("/auth/sign_up", async (req, reply) => {
    const { values: settings } = await loadSettings(ctx.db.kysely);
    const askReason = settings.registrations_mode === "approved";
    const token = csrfToken(ctx, req, reply);
    const values = {
      username: toStringParam(req.input.username) ?? "",
      email: toStringParam(req.input.email) ?? "",
      reason: toStringParam(req.input.reason) ?? "",
    };
    if (!csrfValid(req))
      return renderPage(ctx, reply, {
        title: "Sign up",
        status: 422,
        alert: EXPIRED_FORM,
        body: signUpForm(token, values, {}, askReason),
      });
    if (await throttled(ctx, req, reply, "sign_up")) return reply;
    const password = toStringParam(req.input.password) ?? "";
    if (password !== (toStringParam(req.input.password_confirmation) ?? "")) {
      const errors: ErrorDetails = {
        password_confirmation: [{ error: "ERR_INVALID", description: "doesn't match the password" }],
      };
      return renderPage(ctx, reply, {
        title: "Sign up",
        status: 422,
        body: signUpForm(token, values, errors, askReason),
      });
    }
    try {
      const { user } = await registerUser(
        ctx,
        null,
        {
          ...values,
          password,
          agreement: toStringParam(req.input.agreement) === "1",
          locale: toStringParam(req.input.locale),
          reason: values.reason,
        },
        req.ip,
      );
      await startWebSession(ctx, req, reply, user);
      return reply.redirect("/settings", 303);
    } catch (error) {
      if (error instanceof ValidationFailed) {
        const details = (error.extra?.details ?? {}) as ErrorDetails;
        return renderPage(ctx, reply, {
          title: "Sign up",
          status: 422,
          body: signUpForm(token, values, details, askReason),
        });
      }
      if (error instanceof ApiError && error.status === 403) {
        return renderPage(ctx, reply, {
          title: "Sign up",
          status: 403,
          body: html`<p>This server is not accepting new accounts.</p>`,
        });
      }
      throw error;
    }
  });

  app.get("/auth/confirmation", async (req, reply) => {
    const result = await confirmEmail(ctx, toStringParam(req.input.confirmation_token) ?? "");
    if (result === "confirmed") {
      return renderPage(ctx, reply, {
        title: "E-mail confirmed",
        notice: "Your e-mail address has been confirmed.",
        body: html`<nav><a href="/settings">Continue</a></nav>`,
      });
    }
    const message =
      result === "expired"
        ? "This confirmation link has expired. Sign in to get a new one."
        : "This confirmation link is not valid.";
    return renderPage(ctx, reply, {
      title: "Confirm your e-mail",
      status: result === "expired" ? 410 : 404,
      alert: message,
      body: html`<nav><a href="/settings">Sign in</a></nav>`,
    });
  });

  app.post("/auth/confirmation/resend", async (req, reply) => {
    const session = await currentWebUser(ctx, req);
    if (!session) return reply.redirect("/auth/sign_in", 303);
    if (!csrfValid(req)) return reply.redirect("/settings", 303);
    if (!session.user.confirmed_at) await sendConfirmation(ctx, session.user);
    return renderPage(ctx, reply, {
      title: "Confirm your e-mail",
      notice: "A new confirmation link is on its way.",
      body: html`<nav><a href="/settings">Back</a></nav>`,
    });
  });
}
