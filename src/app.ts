import { randomUUID } from "node:crypto";
import Fastify, { LogController, type FastifyInstance } from "fastify";
import type { Ctx } from "./context.ts";
import { runInRequestScope } from "./db/abort.ts";
import { registerAuth } from "./api/auth.ts";
import { registerBodyParsing } from "./api/body.ts";
import { registerCors } from "./api/cors.ts";
import { registerErrorHandling } from "./api/errors.ts";
import healthRoutes from "./api/health.ts";
import accountRoutes from "./api/v1/accounts.ts";
import appRoutes from "./api/v1/apps.ts";
import emailRoutes from "./api/v1/emails.ts";
import followRoutes from "./api/v1/follows.ts";
import listRoutes from "./api/v1/lists.ts";
import conversationRoutes from "./api/v1/conversations.ts";
import markerRoutes from "./api/v1/markers.ts";
import notificationRoutes from "./api/v1/notifications.ts";
import v1FilterRoutes from "./api/v1/filters.ts";
import filterRoutes from "./api/v2/filters.ts";
import reportRoutes from "./api/v1/reports.ts";
import adminDomainBlockRoutes from "./api/v1/admin/domain_blocks.ts";
import adminDomainAllowRoutes from "./api/v1/admin/domain_allows.ts";
import adminMeasureRoutes from "./api/v1/admin/measures.ts";
import adminTrendRoutes from "./api/v1/admin/trends.ts";
import streamingRoutes from "./api/streaming.ts";
import pushRoutes from "./api/v1/push.ts";
import announcementRoutes from "./api/v1/announcements.ts";
import tagRoutes from "./api/v1/tags.ts";
import accountCollectionRoutes from "./api/v1/account_collections.ts";
import blockRoutes from "./api/v1/blocks.ts";
import endorsementRoutes from "./api/v1/endorsements.ts";
import profileRoutes from "./api/v1/profile.ts";
import statusRoutes from "./api/v1/statuses.ts";
import statusActionRoutes from "./api/v1/status_actions.ts";
import bookmarkRoutes from "./api/v1/bookmarks.ts";
import pollRoutes from "./api/v1/polls.ts";
import mediaRoutes from "./api/v1/media.ts";
import mediaProxyRoutes from "./api/media_proxy.ts";
import scheduledStatusRoutes from "./api/v1/scheduled_statuses.ts";
import translationRoutes from "./api/v1/translation.ts";
import timelineRoutes from "./api/v1/timelines.ts";
import oauthTokenRoutes from "./api/oauth/token.ts";
import oauthMetadataRoutes from "./api/wellknown/oauth_metadata.ts";
import customEmojiRoutes from "./api/v1/custom_emojis.ts";
import instanceV1Routes from "./api/v1/instance.ts";
import instanceV2Routes from "./api/v2/instance.ts";
import searchRoutes from "./api/v2/search.ts";
import groupedNotificationRoutes from "./api/v2/notifications.ts";
import trendRoutes from "./api/v1/trends.ts";
import suggestionRoutes from "./api/v1/suggestions.ts";
import directoryRoutes from "./api/v1/directory.ts";
import nodeinfoRoutes from "./api/wellknown/nodeinfo.ts";
import webfingerRoutes from "./api/wellknown/webfinger.ts";
import federationRoutes from "./federation/routes.ts";
import defaultImageRoutes from "./web/images.ts";
import oauthUserinfoRoutes from "./api/oauth/userinfo.ts";
import webAuthRoutes from "./web/auth.ts";
import webOauthRoutes from "./web/oauth.ts";
import webSettingsRoutes from "./web/settings.ts";
import authorizeInteractionRoutes from "./web/authorize_interaction.ts";
import mediaFileRoutes from "./web/media_files.ts";
import { notFoundHandler } from "./web/not_found.ts";
import { registerFormatConstraint } from "./web/negotiation.ts";
import aboutPageRoutes from "./web/public/about.ts";
import movingRoutes from "./web/moving.ts";
import deleteAccountRoutes from "./web/delete_account.ts";
import archiveRoutes from "./web/archive.ts";
import profilePageRoutes from "./web/public/profile.ts";
import tagPageRoutes from "./web/public/tags.ts";
import exportRoutes from "./web/exports.ts";
import importRoutes from "./web/imports.ts";
import adminRoutes from "./web/admin/index.ts";
import disputeRoutes from "./web/disputes.ts";
import adminAccountRoutes from "./api/v1/admin/accounts.ts";
import adminEmailDomainBlockRoutes from "./api/v1/admin/email_domain_blocks.ts";
import adminIpBlockRoutes, { ipAccessGate } from "./api/v1/admin/ip_blocks.ts";
import adminCanonicalEmailBlockRoutes from "./api/v1/admin/canonical_email_blocks.ts";
import adminReportRoutes from "./api/v1/admin/reports.ts";

export interface AppOptions {
  /** Largest request body accepted outside multipart uploads, in bytes. */
  bodyLimit?: number;
}

type RouteModule = (app: FastifyInstance, ctx: Ctx) => Promise<void>;

/** Every route module, in one list so that the API surface is visible at a glance. */
const ROUTES: RouteModule[] = [
  healthRoutes,
  instanceV1Routes,
  instanceV2Routes,
  searchRoutes,
  groupedNotificationRoutes,
  trendRoutes,
  suggestionRoutes,
  directoryRoutes,
  customEmojiRoutes,
  nodeinfoRoutes,
  webfingerRoutes,
  accountRoutes,
  appRoutes,
  emailRoutes,
  followRoutes,
  listRoutes,
  conversationRoutes,
  markerRoutes,
  notificationRoutes,
  v1FilterRoutes,
  filterRoutes,
  reportRoutes,
  adminDomainBlockRoutes,
  adminDomainAllowRoutes,
  streamingRoutes,
  pushRoutes,
  announcementRoutes,
  tagRoutes,
  accountCollectionRoutes,
  blockRoutes,
  endorsementRoutes,
  profileRoutes,
  statusRoutes,
  statusActionRoutes,
  bookmarkRoutes,
  pollRoutes,
  mediaRoutes,
  mediaProxyRoutes,
  scheduledStatusRoutes,
  translationRoutes,
  timelineRoutes,
  oauthTokenRoutes,
  oauthMetadataRoutes,
  oauthUserinfoRoutes,
  defaultImageRoutes,
  webAuthRoutes,
  webOauthRoutes,
  webSettingsRoutes,
  authorizeInteractionRoutes,
  mediaFileRoutes,
  profilePageRoutes,
  tagPageRoutes,
  aboutPageRoutes,
  movingRoutes,
  deleteAccountRoutes,
  adminRoutes,
  disputeRoutes,
  archiveRoutes,
  exportRoutes,
  importRoutes,
  adminReportRoutes,
  adminEmailDomainBlockRoutes,
  adminIpBlockRoutes,
  adminCanonicalEmailBlockRoutes,
  adminAccountRoutes,
  adminMeasureRoutes,
  adminTrendRoutes,
];

/** Builds the HTTP application on a context (used by the server and by tests through `inject()`). */
export async function buildApp(ctx: Ctx, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.log,
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // Parameters are parsed in api/body.ts, strictly (bad encodings are 400s there).
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500, querystringParser: () => ({}) },
    // Forwarded client addresses are believed only from proxies on this machine or a private network.
    trustProxy: ["loopback", "linklocal", "uniquelocal", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"],
    genReqId: (req) => {
      const given = req.headers["x-request-id"];
      return typeof given === "string" && /^[\w-]{1,100}$/.test(given) ? given : randomUUID();
    },
    return503OnClosing: true,
    // One line per request (the onResponse hook below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    forceCloseConnections: "idle",
    connectionTimeout: 60_000,
    // Below the socket timeout: the `Keep-Alive: timeout=` a client is promised must end before the
    // server drops the socket, or a client reusing it in between sends into a closed connection.
    keepAliveTimeout: 55_000,
    requestTimeout: 120_000,
  });

  // Addresses an admin blocked (`no_access`) get nothing, before anything else is read.
  const ipAccess = ipAccessGate(ctx);
  app.addHook("onRequest", (req, reply, done) => {
    reply.header("X-Request-Id", req.id);
    reply.header("Vary", "Authorization, Origin");
    ipAccess(req, reply, done);
  });
  // A client that hangs up before its answer stops the request's further reads (db/abort.ts).
  app.addHook("onRequest", (req, reply, done) => {
    const gone = new AbortController();
    reply.raw.once("close", () => {
      if (!reply.raw.writableFinished) gone.abort();
    });
    runInRequestScope(gone.signal, done);
  });
  app.addHook("onResponse", async (req, reply) => {
    req.log.info(
      { method: req.method, url: req.url.split("?")[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      "request",
    );
  });
  registerErrorHandling(app);
  app.setNotFoundHandler(notFoundHandler(ctx));
  registerCors(app);
  await registerBodyParsing(app);
  registerAuth(app, ctx);
  registerFormatConstraint(app);
  for (const routes of ROUTES) await routes(app, ctx);
  await federationRoutes(app, ctx);
  return app;
}
