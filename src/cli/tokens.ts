import { cliApplication } from "../services/auth/applications.ts";
import { isKnownScope, parseScopes } from "../services/auth/scopes.ts";
import { issueAccessToken } from "../services/auth/tokens.ts";
import { findLocalUser } from "../services/accounts/create.ts";
import { UsageError, type Command } from "./command.ts";

export const tokensCreate: Command = {
  path: ["tokens", "create"],
  summary: "Issues an access token acting for a local user and prints it.",
  usage: 'tokens create USERNAME --scopes "read write follow push" [--json]',
  positionals: [1, 1],
  options: {
    scopes: { type: "string", description: 'Space-separated scopes (default "read")' },
    json: { type: "boolean", description: 'Print {"access_token": "…"} instead of the bare token' },
  },
  async run(ctx, { values, positionals }, io) {
    const scopes = parseScopes(typeof values.scopes === "string" ? values.scopes : "read");
    if (scopes.length === 0) throw new UsageError("--scopes must name at least one scope");
    const unknown = scopes.filter((s) => !isKnownScope(s));
    if (unknown.length > 0) throw new UsageError(`unknown scope ${unknown.join(", ")}`);
    const found = await findLocalUser(ctx, positionals[0]);
    if (!found) {
      io.err(`No user with the username ${positionals[0]}`);
      return 1;
    }
    const app = await cliApplication(ctx.db.kysely);
    const { accessToken } = await issueAccessToken(ctx.db.kysely, {
      applicationId: app.id,
      userId: found.user.id,
      scopes: scopes.join(" "),
    });
    io.out(values.json ? JSON.stringify({ access_token: accessToken }) : accessToken);
    return 0;
  },
};
