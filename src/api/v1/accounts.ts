import type { FastifyInstance } from "fastify";
import type { Ctx } from "../../context.ts";
import { serializeAccount, serializeAccounts, serializeCredentialAccount } from "../../entities/account.ts";
import { NotFound, ParameterMissing, ValidationFailed } from "../../errors.ts";
import { findVisibleAccount, findVisibleAccounts, lookupOrResolveAccount } from "../../services/accounts/lookup.ts";
import { updateProfile, type ProfileUpdate } from "../../services/accounts/profile.ts";
import { registerUser, registeringApplication } from "../../services/accounts/register.ts";
import { tokenResponse } from "../../services/auth/oauth.ts";
import { issueAccessToken } from "../../services/auth/tokens.ts";
import { userOf } from "../auth.ts";
import {
  fileData,
  isUploadedFile,
  orderedValues,
  toBoolean,
  toId,
  toObject,
  toStringArray,
  toStringParam,
  type ParamValue,
} from "../params.ts";

const PROFILE_UPLOAD_LIMIT = 16 * 1024 * 1024;

/** `fields_attributes` as a hash (`{"0": {name, value}}`) or an array of {name, value}, in order. */
function fieldsParam(value: ParamValue | undefined): ProfileUpdate["fields"] {
  if (value === undefined || value === null || value === "") return value === "" ? [] : undefined;
  const entries = Array.isArray(value) ? value : orderedValues(toObject(value) ?? {});
  return entries.map((entry) => {
    const field = toObject(entry) ?? {};
    return { name: toStringParam(field.name) ?? "", value: toStringParam(field.value) ?? "" };
  });
}

function imageParam(value: ParamValue | undefined, label: string) {
  if (value === undefined || value === null || value === "") return undefined;
  if (!isUploadedFile(value)) throw new ValidationFailed(`${label} must be an uploaded image file`);
  return { data: fileData(value) };
}

export default async function accountRoutes(app: FastifyInstance, ctx: Ctx) {
  app.post(
    "/api/v1/accounts",
    { preHandler: app.auth({ scopes: ["write:accounts"], alwaysPublic: true }), config: { throttles: ["sign_up"] } },
    async (req, reply) => {
      const viewer = req.viewer!;
      const application = await registeringApplication(ctx, viewer);
      const input = req.input;
      const { user } = await registerUser(
        ctx,
        application,
        {
          username: toStringParam(input.username) ?? "",
          email: toStringParam(input.email) ?? "",
          password: toStringParam(input.password) ?? "",
          // Mastodon accepts only these spellings of consent (not "on").
          agreement: ([true, "true", "1", 1] as unknown[]).includes(input.agreement),
          locale: toStringParam(input.locale) || undefined,
          reason: toStringParam(input.reason),
        },
        req.ip,
      );
      // The new user's token carries the app's registered scopes (Mastodon's AppSignUpService).
      const { row, accessToken } = await issueAccessToken(ctx.db.kysely, {
        applicationId: application.id,
        userId: user.id,
        scopes: application.scopes,
      });
      reply.header("Cache-Control", "no-store");
      return tokenResponse(row, accessToken);
    },
  );

  app.get(
    "/api/v1/accounts/verify_credentials",
    { preHandler: app.auth({ scopes: ["read:accounts", "profile"], user: true }) },
    async (req) => {
      const viewer = userOf(req);
      return serializeCredentialAccount(ctx, viewer.account, viewer.user, viewer.role);
    },
  );

  app.patch(
    "/api/v1/accounts/update_credentials",
    { preHandler: app.auth({ scopes: ["write:accounts"], user: true }), config: { maxFileSize: PROFILE_UPLOAD_LIMIT } },
    async (req) => {
      const viewer = userOf(req);
      const input = req.input;
      const source = toObject(input.source) ?? {};
      const update: ProfileUpdate = {
        displayName: toStringParam(input.display_name),
        note: toStringParam(input.note),
        avatar: imageParam(input.avatar, "Avatar"),
        header: imageParam(input.header, "Header"),
        avatarDescription: toStringParam(input.avatar_description),
        headerDescription: toStringParam(input.header_description),
        locked: toBoolean(input.locked),
        bot: toBoolean(input.bot),
        discoverable: toBoolean(input.discoverable),
        hideCollections: toBoolean(input.hide_collections),
        indexable: toBoolean(input.indexable),
        fields: fieldsParam(input.fields_attributes),
        privacy: toStringParam(source.privacy),
        sensitive: toBoolean(source.sensitive),
        language: toStringParam(source.language),
      };
      const { account, user } = await updateProfile(ctx, viewer.account, viewer.user, update);
      return serializeCredentialAccount(ctx, account, user, viewer.role);
    },
  );

  app.get(
    "/api/v1/accounts/lookup",
    { preHandler: app.auth({ optional: true, scopes: ["read:accounts"] }) },
    async (req) => {
      const acct = toStringParam(req.input.acct);
      if (!acct) throw new ParameterMissing("acct");
      const account = await lookupOrResolveAccount(ctx, acct);
      if (!account) throw new NotFound();
      return serializeAccount(ctx, account);
    },
  );

  app.get("/api/v1/accounts", { preHandler: app.auth({ optional: true, scopes: ["read:accounts"] }) }, async (req) => {
    const ids = toStringArray(req.input.id);
    if (ids.length > 40) throw new ValidationFailed("Too many IDs requested (maximum is 40)");
    const rows = await findVisibleAccounts(
      ctx,
      ids.map((id) => toId(id)).filter((id): id is string => !!id),
    );
    return serializeAccounts(ctx, rows);
  });

  app.get(
    "/api/v1/accounts/:id",
    { preHandler: app.auth({ optional: true, scopes: ["read:accounts"] }) },
    async (req) => {
      const account = await findVisibleAccount(ctx, toId(req.input.id));
      if (!account) throw new NotFound();
      return serializeAccount(ctx, account);
    },
  );
}
