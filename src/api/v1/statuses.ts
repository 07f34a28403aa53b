import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeStatus, serializeStatuses } from "../../entities/status.ts";
import { createStatus, findIdempotent, type CreateStatusParams } from "../../services/statuses/create.ts";
import { ANONYMOUS_CONTEXT, SIGNED_IN_CONTEXT, statusContext } from "../../services/statuses/context.ts";
import { deleteStatus } from "../../services/statuses/delete.ts";
import { editStatus } from "../../services/statuses/edit.ts";
import { serializeStatusHistory } from "../../entities/status_edit.ts";
import { NotFound, ValidationFailed } from "../../errors.ts";
import { serializeScheduledStatus } from "../../entities/scheduled_status.ts";
import { decideSchedule, scheduleStatus } from "../../services/statuses/schedule.ts";
import { findOwnStatus, findVisibleStatus, findVisibleStatuses } from "../../services/statuses/find.ts";
import { userOf } from "../auth.ts";
import { orderedValues, toBoolean, toId, toInteger, toObject, toStringArray, toStringParam, type ParamObject } from "../params.ts";

/** The poll of a create or edit request, when `poll[options]` or `poll[expires_in]` is given. */
export function pollParams(input: ParamObject): CreateStatusParams["poll"] {
  const poll = toObject(input.poll);
  if (!poll || (poll.options === undefined && poll.expires_in === undefined)) return undefined;
  return {
    options: toStringArray(poll.options),
    expiresIn: toInteger(poll.expires_in),
    multiple: toBoolean(poll.multiple) ?? false,
    hideTotals: toBoolean(poll.hide_totals) ?? false,
  };
}

export function createParams(input: ParamObject): CreateStatusParams {
  const replyTo = toStringParam(input.in_reply_to_id);
  return {
    text: toStringParam(input.status) ?? "",
    mediaIds: toStringArray(input.media_ids),
    poll: pollParams(input),
    // A reply target that is not an ID cannot exist; "0" stands in so the lookup answers 404.
    inReplyToId: replyTo ? (toId(replyTo) ?? "0") : undefined,
    sensitive: toBoolean(input.sensitive),
    spoilerText: toStringParam(input.spoiler_text) ?? "",
    visibility: toStringParam(input.visibility),
    language: toStringParam(input.language),
  };
}

function idempotencyKey(req: FastifyRequest): string | undefined {
  const key = req.headers["idempotency-key"];
  return typeof key === "string" && key.length > 0 && key.length <= 200 ? key : undefined;
}

export default async function statusRoutes(app: FastifyInstance, ctx: Ctx) {
  const readStatuses = app.auth({ optional: true, scopes: ["read:statuses"] });

  app.post("/api/v1/statuses", { preHandler: app.auth({ scopes: ["write:statuses"], user: true }) }, async (req) => {
    const viewer = userOf(req);
    const key = idempotencyKey(req);
    const author = { account: viewer.account, user: viewer.user, applicationId: viewer.applicationId };
    const earlier = await findIdempotent(ctx.db.kysely, viewer.account.id, key);
    if (earlier?.statusId) {
      const row = await ctx.db.kysely.selectFrom("statuses").selectAll().where("id", "=", earlier.statusId).executeTakeFirst();
      if (row) return serializeStatus(ctx, row, viewer.account);
    }
    if (earlier?.scheduledStatusId) {
      const row = await ctx.db.kysely.selectFrom("scheduled_statuses").selectAll().where("id", "=", earlier.scheduledStatusId).executeTakeFirst();
      if (row) return serializeScheduledStatus(ctx, row);
    }
    const params = createParams(req.input);
    const scheduledAt = toStringParam(req.input.scheduled_at);
    const decision = scheduledAt ? decideSchedule(scheduledAt) : { kind: "now" as const };
    if (decision.kind === "later") return serializeScheduledStatus(ctx, await scheduleStatus(ctx, author, params, decision.at, key));
    let status;
    try {
      status = await createStatus(ctx, author, params, key);
    } catch (error) {
      // Two requests with one key at once: the loser answers with the winner's status.
      const winner = await findIdempotent(ctx.db.kysely, viewer.account.id, key);
      const row = winner?.statusId ? await ctx.db.kysely.selectFrom("statuses").selectAll().where("id", "=", winner.statusId).executeTakeFirst() : undefined;
      if (!row) throw error;
      status = row;
    }
    return serializeStatus(ctx, status, viewer.account);
  });

  app.get("/api/v1/statuses", { preHandler: readStatuses }, async (req) => {
    const requested = [...new Set(toStringArray(req.input.id))];
    if (requested.length > 20) throw new ValidationFailed("Too many IDs requested (maximum is 20)");
    const ids = requested.map((id) => toId(id)).filter((id): id is string => !!id);
    const viewer = req.viewer?.account ?? undefined;
    return serializeStatuses(ctx, await findVisibleStatuses(ctx, ids, viewer?.id), viewer);
  });

  app.get("/api/v1/statuses/:id", { preHandler: readStatuses }, async (req) => {
    const viewer = req.viewer?.account ?? undefined;
    const status = await findVisibleStatus(ctx, toId(req.input.id), viewer?.id);
    return serializeStatus(ctx, status, viewer);
  });

  app.get("/api/v1/statuses/:id/context", { preHandler: readStatuses }, async (req) => {
    const viewer = req.viewer?.account ?? undefined;
    const status = await findVisibleStatus(ctx, toId(req.input.id), viewer?.id);
    const { ancestors, descendants } = await statusContext(ctx, status, viewer?.id, viewer ? SIGNED_IN_CONTEXT : ANONYMOUS_CONTEXT);
    const serialized = await serializeStatuses(ctx, [...ancestors, ...descendants], viewer);
    return { ancestors: serialized.slice(0, ancestors.length), descendants: serialized.slice(ancestors.length) };
  });

  app.put("/api/v1/statuses/:id", { preHandler: app.auth({ scopes: ["write:statuses"], user: true }) }, async (req) => {
    const viewer = userOf(req);
    const status = await findOwnStatus(ctx, toId(req.input.id), viewer.account.id);
    if (status.reblog_of_id) throw new NotFound();
    const input = req.input;
    const attributes = Array.isArray(input.media_attributes) ? input.media_attributes : orderedValues(toObject(input.media_attributes) ?? {});
    const updated = await editStatus(ctx, status, {
      text: toStringParam(input.status),
      spoilerText: toStringParam(input.spoiler_text),
      sensitive: toBoolean(input.sensitive),
      language: toStringParam(input.language),
      mediaIds: input.media_ids === undefined ? undefined : toStringArray(input.media_ids),
      mediaAttributes: attributes.map((entry) => {
        const a = toObject(entry) ?? {};
        return { id: toStringParam(a.id) ?? "", description: toStringParam(a.description), focus: toStringParam(a.focus) };
      }),
      poll: pollParams(input),
    });
    return serializeStatus(ctx, updated, viewer.account);
  });

  app.get("/api/v1/statuses/:id/history", { preHandler: readStatuses }, async (req) => {
    const viewer = req.viewer?.account ?? undefined;
    const status = await findVisibleStatus(ctx, toId(req.input.id), viewer?.id);
    const edits = await ctx.db.kysely.selectFrom("status_edits").selectAll().where("status_id", "=", status.id).orderBy("id").execute();
    return serializeStatusHistory(ctx, status, edits);
  });

  app.get("/api/v1/statuses/:id/source", { preHandler: app.auth({ scopes: ["read:statuses"], user: true }) }, async (req) => {
    const viewer = userOf(req);
    const status = await findVisibleStatus(ctx, toId(req.input.id), viewer.account.id);
    return { id: status.id, text: status.text, spoiler_text: status.spoiler_text };
  });

  app.delete(
    "/api/v1/statuses/:id",
    { preHandler: app.auth({ scopes: ["write:statuses"], user: true }), config: { throttles: ["status_deletion"] } },
    async (req) => {
      const viewer = userOf(req);
      const status = await findOwnStatus(ctx, toId(req.input.id), viewer.account.id);
      // Serialized first: the answer carries the source text, media and poll for redrafting.
      const answer = await serializeStatus(ctx, status, viewer.account, { withSourceText: true });
      await deleteStatus(ctx, status);
      return answer;
    },
  );

}
