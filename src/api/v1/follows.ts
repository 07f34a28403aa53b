import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import type { AccountRow } from "../../db/schema.ts";
import { serializeRelationship, serializeRelationships } from "../../entities/relationship.ts";
import {
  authorizeFollowRequest,
  followAccount,
  followRequestsFor,
  rejectFollowRequest,
  removeFromFollowers,
  targetAccount,
  unfollowAccount,
  type FollowOptions,
} from "../../services/accounts/follow.ts";
import { findVisibleAccounts } from "../../services/accounts/lookup.ts";
import { userOf } from "../auth.ts";
import { answerAccountPage, pageParams } from "../pagination.ts";
import { toBoolean, toId, toStringArray, type ParamObject } from "../params.ts";

/** `reblogs`, `notify`, `languages[]` of a follow: absent ones keep an existing follow's settings. */
function followOptions(input: ParamObject): FollowOptions {
  return {
    reblogs: toBoolean(input.reblogs),
    notify: toBoolean(input.notify),
    languages: input.languages === undefined ? undefined : toStringArray(input.languages),
  };
}

const MAX_RELATIONSHIPS = 100;

/** Follows, follow requests and relationships. `follow` is the legacy scope these still accept. */
export default async function followRoutes(app: FastifyInstance, ctx: Ctx) {
  const writeFollows = app.auth({ scopes: ["write:follows", "follow"], user: true });
  const readFollows = app.auth({ scopes: ["read:follows", "follow"], user: true });

  const actions = {
    follow: (viewer, target, input) => followAccount(ctx, viewer, target, followOptions(input)),
    unfollow: (viewer, target) => unfollowAccount(ctx, viewer, target),
    remove_from_followers: (viewer, target) => removeFromFollowers(ctx, viewer, target),
  } satisfies Record<string, (viewer: AccountRow, target: AccountRow, input: ParamObject) => Promise<void>>;

  for (const [name, action] of Object.entries(actions)) {
    const throttles = name === "follow" ? (["follows"] as const) : [];
    app.post(`/api/v1/accounts/:id/${name}`, { preHandler: writeFollows, config: { throttles } }, async (req) => {
      const viewer = userOf(req);
      const target = await targetAccount(ctx, toId(req.input.id));
      await action(viewer.account, target, req.input);
      return serializeRelationship(ctx, viewer.account.id, target.id);
    });
  }

  app.get(
    "/api/v1/accounts/relationships",
    { preHandler: app.auth({ scopes: ["read:follows"], user: true }) },
    async (req) => {
      const viewer = userOf(req);
      // At most 100 accounts a request: clients ask for a page's worth; more would be an unbounded query.
      const requested = [...new Set(toStringArray(req.input.id))].slice(0, MAX_RELATIONSHIPS);
      const ids = requested.map((id) => toId(id)).filter((id): id is string => id !== undefined);
      const withSuspended = toBoolean(req.input.with_suspended) ?? false;
      const accounts = (await findVisibleAccounts(ctx, ids)).filter((a) => withSuspended || !a.suspended_at);
      return serializeRelationships(
        ctx,
        viewer.account.id,
        accounts.map((a) => a.id),
      );
    },
  );

  app.get("/api/v1/follow_requests", { preHandler: readFollows }, async (req, reply) => {
    const viewer = userOf(req);
    const page = pageParams(req.input, 40, 80);
    return answerAccountPage(ctx, req, reply, page, await followRequestsFor(ctx, viewer.account, page));
  });

  for (const [name, decide] of [
    ["authorize", authorizeFollowRequest],
    ["reject", rejectFollowRequest],
  ] as const) {
    app.post(`/api/v1/follow_requests/:id/${name}`, { preHandler: writeFollows }, async (req) => {
      const viewer = userOf(req);
      const requester = await targetAccount(ctx, toId(req.input.id));
      await decide(ctx, viewer.account, requester);
      return serializeRelationship(ctx, viewer.account.id, requester.id);
    });
  }
}
