import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeAccounts } from "../../entities/account.ts";
import { serializeScheduledStatus } from "../../entities/scheduled_status.ts";
import { serializeStatus, serializeStatuses, type Status } from "../../entities/status.ts";
import { hiddenBy } from "../../entities/filter.ts";
import { serializeStatusHistory } from "../../entities/status_edit.ts";
import { serializeStatusSource } from "../../entities/status_source.ts";
import { NotFound, Unprocessable, ValidationFailed } from "../../errors.ts";
import { ANONYMOUS_CONTEXT, SIGNED_IN_CONTEXT, statusContext } from "../../services/statuses/context.ts";
import { deleteStatus } from "../../services/statuses/delete.ts";
import { editStatus, type EditStatusParams } from "../../services/statuses/edit.ts";
import { ReplyTargetNotFound, UnexpectedMentions } from "../../services/statuses/errors.ts";
import { findOwnStatus, findVisibleStatus, findVisibleStatuses } from "../../services/visibility/find.ts";
import { postStatus, type PostParams } from "../../services/statuses/post.ts";
import type { PollParams } from "../../services/statuses/validate.ts";
import { userOf } from "../auth.ts";
import {
  orderedValues,
  toBoolean,
  toId,
  toInteger,
  toObject,
  toStringArray,
  toStringParam,
  scheduledAtParam,
  type ParamObject,
} from "../params.ts";
import { updateRoute } from "../update_route.ts";

/** The poll of a create or edit request, when `poll[options]` or `poll[expires_in]` is given. */
export function pollParams(input: ParamObject): PollParams | undefined {
  const poll = toObject(input.poll);
  if (!poll || (poll.options === undefined && poll.expires_in === undefined)) return undefined;
  return {
    options: toStringArray(poll.options),
    expiresIn: toInteger(poll.expires_in),
    multiple: toBoolean(poll.multiple) ?? false,
    hideTotals: toBoolean(poll.hide_totals) ?? false,
  };
}

/** The parameters of POST /api/v1/statuses. */
export function createParams(input: ParamObject): PostParams {
  const replyTo = toStringParam(input.in_reply_to_id);
  const inReplyToId = replyTo ? toId(replyTo) : undefined;
  // A reply target that is not an ID cannot exist.
  if (replyTo && !inReplyToId) throw new ReplyTargetNotFound();
  const scheduledAt = scheduledAtParam(input.scheduled_at);
  return {
    text: toStringParam(input.status) ?? "",
    mediaIds: toStringArray(input.media_ids),
    poll: pollParams(input),
    inReplyToId,
    sensitive: toBoolean(input.sensitive),
    spoilerText: toStringParam(input.spoiler_text) ?? "",
    visibility: toStringParam(input.visibility),
    language: toStringParam(input.language),
    allowedMentions: input.allowed_mentions === undefined ? undefined : toStringArray(input.allowed_mentions),
    scheduledAt,
  };
}

/** The parameters of PUT /api/v1/statuses/:id: absent fields keep their value. */
export function editParams(input: ParamObject): EditStatusParams {
  const attributes = Array.isArray(input.media_attributes)
    ? input.media_attributes
    : orderedValues(toObject(input.media_attributes) ?? {});
  return {
    text: toStringParam(input.status),
    spoilerText: toStringParam(input.spoiler_text),
    sensitive: toBoolean(input.sensitive),
    language: toStringParam(input.language),
    mediaIds: input.media_ids === undefined ? undefined : toStringArray(input.media_ids),
    mediaAttributes: attributes.map((entry) => {
      const a = toObject(entry) ?? {};
      return {
        id: toStringParam(a.id) ?? "",
        description: toStringParam(a.description),
        focus: toStringParam(a.focus),
      };
    }),
    poll: pollParams(input),
  };
}

function idempotencyKey(req: FastifyRequest): string | undefined {
  const key = req.headers["idempotency-key"];
  return typeof key === "string" && key.length > 0 && key.length <= 200 ? key : undefined;
}

export default async function statusRoutes(app: FastifyInstance, ctx: Ctx) {
  const readStatuses = app.auth({ optional: true, scopes: ["read:statuses"] });
  const writeStatuses = app.auth({ scopes: ["write:statuses"], user: true });

  app.post("/api/v1/statuses", { preHandler: writeStatuses, config: { throttles: ["statuses"] } }, async (req) => {
    const viewer = userOf(req);
    const author = { account: viewer.account, user: viewer.user, applicationId: viewer.applicationId };
    try {
      const posted = await postStatus(ctx, author, createParams(req.input), idempotencyKey(req));
      if (posted.kind === "scheduled") return serializeScheduledStatus(ctx, posted.scheduled);
      return serializeStatus(ctx, posted.status, viewer.account);
    } catch (error) {
      if (!(error instanceof UnexpectedMentions)) throw error;
      throw new Unprocessable(error.message, { unexpected_accounts: await serializeAccounts(ctx, error.accounts) });
    }
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
    const limits = viewer ? SIGNED_IN_CONTEXT : ANONYMOUS_CONTEXT;
    const { ancestors, descendants } = await statusContext(ctx, status, viewer?.id, limits);
    // One serialization for both parts; statuses a `hide` filter matches leave the thread.
    const serialized = await serializeStatuses(ctx, [...ancestors, ...descendants], viewer, {
      filterContext: "thread",
    });
    const shown = (part: Status[]) => part.filter((s) => !hiddenBy(s.filtered));
    return {
      ancestors: shown(serialized.slice(0, ancestors.length)),
      descendants: shown(serialized.slice(ancestors.length)),
    };
  });

  updateRoute(
    app,
    "/api/v1/statuses/:id",
    { preHandler: writeStatuses, config: { throttles: ["statuses"] } },
    async (req) => {
      const viewer = userOf(req);
      const status = await findOwnStatus(ctx, toId(req.input.id), viewer.account.id);
      if (status.reblog_of_id) throw new NotFound();
      const updated = await editStatus(ctx, status, editParams(req.input));
      return serializeStatus(ctx, updated, viewer.account);
    },
  );

  app.get("/api/v1/statuses/:id/history", { preHandler: readStatuses }, async (req) => {
    const viewer = req.viewer?.account ?? undefined;
    const status = await findVisibleStatus(ctx, toId(req.input.id), viewer?.id);
    return serializeStatusHistory(ctx, status);
  });

  app.get(
    "/api/v1/statuses/:id/source",
    { preHandler: app.auth({ scopes: ["read:statuses"], user: true }) },
    async (req) => {
      const viewer = userOf(req);
      const status = await findVisibleStatus(ctx, toId(req.input.id), viewer.account.id);
      return serializeStatusSource(status);
    },
  );

  app.delete(
    "/api/v1/statuses/:id",
    { preHandler: writeStatuses, config: { throttles: ["status_deletion"] } },
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
