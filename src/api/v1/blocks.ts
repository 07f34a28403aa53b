import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import type { AccountRow } from "../../db/schema.ts";
import { serializeAccounts } from "../../entities/account.ts";
import { serializeRelationship } from "../../entities/relationship.ts";
import { targetAccount } from "../../services/accounts/follow.ts";
import {
  blockAccount,
  blockDomain,
  blockedAccounts,
  blockedDomains,
  mutedAccounts,
  muteAccount,
  unblockAccount,
  unblockDomain,
  unmuteAccount,
} from "../../services/accounts/hiding.ts";
import { userOf } from "../auth.ts";
import { answerAccountPage, pageParams, setLinkHeader } from "../pagination.ts";
import { toBoolean, toId, toInteger, toStringParam, type ParamObject } from "../params.ts";

type Action = (viewer: AccountRow, target: AccountRow, input: ParamObject) => Promise<void>;

/** Blocks, mutes and the user's domain blocks. `follow` is the legacy scope these still accept. */
export default async function blockRoutes(app: FastifyInstance, ctx: Ctx) {
  const auth = (scope: string) => app.auth({ scopes: [scope, "follow"], user: true });

  const actions: Array<[string, string, Action]> = [
    ["block", "write:blocks", (viewer, target) => blockAccount(ctx, viewer, target)],
    ["unblock", "write:blocks", (viewer, target) => unblockAccount(ctx, viewer, target)],
    [
      "mute",
      "write:mutes",
      (viewer, target, input) =>
        muteAccount(ctx, viewer, target, {
          notifications: toBoolean(input.notifications),
          duration: toInteger(input.duration),
        }),
    ],
    ["unmute", "write:mutes", (viewer, target) => unmuteAccount(ctx, viewer, target)],
  ];
  for (const [name, scope, action] of actions) {
    app.post(`/api/v1/accounts/:id/${name}`, { preHandler: auth(scope) }, async (req) => {
      const viewer = userOf(req);
      const target = await targetAccount(ctx, toId(req.input.id));
      await action(viewer.account, target, req.input);
      return serializeRelationship(ctx, viewer.account.id, target.id);
    });
  }

  app.get("/api/v1/blocks", { preHandler: auth("read:blocks") }, async (req, reply) => {
    const viewer = userOf(req);
    const page = pageParams(req.input, 40, 80);
    return answerAccountPage(ctx, req, reply, page, await blockedAccounts(ctx, viewer.account, page));
  });

  app.get("/api/v1/mutes", { preHandler: auth("read:mutes") }, async (req, reply) => {
    const viewer = userOf(req);
    const page = pageParams(req.input, 40, 80);
    const { rows, accounts } = await mutedAccounts(ctx, viewer.account, page);
    setLinkHeader(ctx.config, req, reply, {
      items: rows,
      cursor: (r) => r.id,
      limit: page.limit,
      prevParam: "since_id",
    });
    const serialized = await serializeAccounts(
      ctx,
      accounts.map((a) => a.account),
    );
    // MutedAccount: the account and when the mute ends.
    return serialized.map((account, i) => ({ ...account, mute_expires_at: accounts[i].expiresAt }));
  });

  app.get("/api/v1/domain_blocks", { preHandler: auth("read:blocks") }, async (req, reply) => {
    const viewer = userOf(req);
    const page = pageParams(req.input, 100, 200);
    const rows = await blockedDomains(ctx, viewer.account, page);
    setLinkHeader(ctx.config, req, reply, {
      items: rows,
      cursor: (r) => r.id,
      limit: page.limit,
      prevParam: "since_id",
    });
    return rows.map((r) => r.domain);
  });

  app.post("/api/v1/domain_blocks", { preHandler: auth("write:blocks") }, async (req) => {
    await blockDomain(ctx, userOf(req).account, toStringParam(req.input.domain));
    return {};
  });

  app.delete("/api/v1/domain_blocks", { preHandler: auth("write:blocks") }, async (req) => {
    await unblockDomain(ctx, userOf(req).account, toStringParam(req.input.domain));
    return {};
  });
}
