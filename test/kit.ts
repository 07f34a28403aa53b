/**
 * The test kit every test uses: a fresh app on a fresh database (SQLite in memory by default, a
 * private PostgreSQL schema when TEST_DATABASE_URL=postgres://…), the named standard accounts and
 * data set, helpers that build the social graph and content, a shared scope check, and request
 * helpers that go through HTTP (Fastify's inject). Response bodies are typed in types.ts.
 *
 * The standard accounts (`standardAccounts(ctx)`, made once per server, with no follows or posts):
 *   alice   a local user; in the data set, the author of the standard statuses
 *   bob     a local user; in the data set, alice's follower
 *   carol   a local user; in the data set, a stranger to alice
 *   admin   a local user with the Admin role
 *   lucy    a local user with a locked account (follow requests need approval)
 *   rita    rita@remote.example, a remote account with no user
 *   app     the "Test Client" application every standard token was issued through
 * Every standard token holds `read write follow push`.
 *
 * The standard data set (`standardData(server)`, built on first use, once per server, so tests that
 * do not ask for it pay nothing). Statuses and media go through the app (HTTP); the social graph and
 * the emoji are stored the way the app would store them (see `follow`):
 *   follows
 *     bob → alice        so bob reads alice's private status
 *     rita → alice       a remote follower
 *     carol → lucy       an accepted follower of the locked account
 *   follow requests (pending)
 *     bob → lucy         lucy has not answered yet: bob does not follow her
 *   blocks
 *     carol ⊘ rita
 *   mutes
 *     bob mutes carol    for good, notifications included
 *   statuses, all by alice, oldest first
 *     alicePublic        "Hello from alice #introduction", public
 *     aliceUnlisted      "Quietly unlisted", unlisted
 *     alicePrivate       "For my followers only", private: alice and bob see it, carol does not
 *     aliceDirect        "@bob a secret between us", direct: alice and bob see it
 *     bobReply           bob's public reply "@alice welcome!" to alicePublic (replies_count 1)
 *   media
 *     aliceUnattached    alice's image (PNG 32×24) described "A teal rectangle", attached to nothing
 *   emoji
 *     blobcat            a local custom emoji, visible in the picker
 *
 * Rows in `TestUser.account` are snapshots taken when the user was made: read counters and flags
 * that helpers change through the API (`accountJson`) or the database.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { before, describe, mock, test } from "node:test";
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import type { Transaction } from "kysely";
import type { LogEvent } from "kysely";
import pg from "pg";
import { pino, type Logger } from "pino";
import sharp from "sharp";
import { buildApp } from "../src/app.ts";
import { loadConfig, type Config } from "../src/config.ts";
import type { Ctx } from "../src/context.ts";
import { openDatabase } from "../src/db/connect.ts";
import { newId } from "../src/db/ids.ts";
import { migrateToLatest } from "../src/db/migrate.ts";
import type { AccountRow, ApplicationRow, CustomEmojiRow, Database, UserRow } from "../src/db/schema.ts";
import { JobQueue } from "../src/jobs/queue.ts";
import { MemoryRateLimitStore } from "../src/api/rate_limit.ts";
import type { MailDomainChecker } from "../src/services/mail/domains.ts";
import { FileSystemStorage } from "../src/media/storage.ts";
import { createBus } from "../src/realtime/bus.ts";
import { registerJobHandlers } from "../src/jobs/handlers.ts";
import { mergeIntoHome, removeFromHome } from "../src/services/timelines/feeds.ts";
import { createLocalUser } from "../src/services/accounts/create.ts";
import { findRoleByName } from "../src/services/accounts/roles.ts";
import { insertApplication } from "../src/services/auth/applications.ts";
import { parentScope, READ_SCOPES, WRITE_SCOPES } from "../src/services/auth/scopes.ts";
import type { RemoteStatusData } from "../src/services/statuses/remote.ts";
import { digest, issueAccessToken } from "../src/services/auth/tokens.ts";
import type { Account, MediaAttachment, Status, Visibility } from "./types.ts";
import { assembleContext } from "../src/boot.ts";

/** Which engine this run uses: `sqlite` unless TEST_DATABASE_URL names a PostgreSQL database. */
export const TEST_ENGINE: "sqlite" | "postgres" = process.env.TEST_DATABASE_URL?.startsWith("postgres")
  ? "postgres"
  : "sqlite";

export interface TestServer {
  ctx: Ctx;
  app: FastifyInstance;
  config: Config;
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Extra environment for the configuration (e.g. DISALLOW_UNAUTHENTICATED_API_ACCESS). */
  env?: Record<string, string>;
  /** The logger (default: silent, or TEST_LOG_LEVEL); tests of what gets logged pass their own. */
  log?: Logger;
  /** Called with every query the server runs (plan tests capture the SQL of the services). */
  onQuery?: (event: LogEvent) => void;
  /** Add routes before the app is made ready (tests of the request plumbing use it). */
  routes?: (app: FastifyInstance, ctx: Ctx) => void | Promise<void>;
}

/** Tests never ask real DNS: domains under `.invalid` cannot receive mail, all others can. */
export const TEST_MAIL_DOMAINS: MailDomainChecker = {
  canReceiveMail: async (domain) => !domain.toLowerCase().endsWith(".invalid"),
};

/** A fresh Rookery on a fresh database. Call `close()` (e.g. in `after`). */
export async function createTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "rookery-test-"));
  const pgUrl = process.env.TEST_DATABASE_URL;
  const schema = TEST_ENGINE === "postgres" ? `test_${randomBytes(6).toString("hex")}` : undefined;
  const config = loadConfig({
    LOCAL_DOMAIN: "rookery.test",
    LOCAL_HTTPS: "true",
    ROOKERY_DATA_DIR: dataDir,
    DATABASE_URL: TEST_ENGINE === "postgres" ? pgUrl : "sqlite::memory:",
    LOG_LEVEL: "silent",
    ...options.env,
  });
  const log = options.log ?? pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const db = await openDatabase(config.databaseUrl, { schema, poolSize: 4, onQuery: options.onQuery });
  const dropSchema = async () => {
    if (!schema || !pgUrl) return;
    const client = new pg.Client({ connectionString: pgUrl });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await client.end();
  };
  try {
    await migrateToLatest(db);
  } catch (error) {
    await db.close();
    await dropSchema();
    throw error;
  }
  const jobs = new JobQueue(db, log);
  const ctx = assembleContext({
    config,
    db,
    jobs,
    log,
    rateLimits: new MemoryRateLimitStore(),
    mailDomains: TEST_MAIL_DOMAINS,
    media: new FileSystemStorage(config.mediaDir),
    events: createBus(config.redisUrl, log, db),
  });
  registerJobHandlers(ctx);
  const app = await buildApp(ctx);
  await options.routes?.(app, ctx);
  await app.ready();
  return {
    ctx,
    app,
    config,
    async close() {
      await app.close();
      await jobs.stop();
      await ctx.events.close();
      await db.close();
      await dropSchema();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface TestUser {
  account: AccountRow;
  user: UserRow;
  /** A bearer token with `read write follow push`. */
  token: string;
  username: string;
}

export interface StandardAccounts {
  alice: TestUser;
  bob: TestUser;
  carol: TestUser;
  /** Holds the Admin role. */
  admin: TestUser;
  /** A locked account (follow requests need approval). */
  lucy: TestUser;
  /** A remote account on remote.example, with no user. */
  rita: AccountRow;
  /** The application the standard tokens were issued through. */
  app: ApplicationRow;
}

export const STANDARD_SCOPES = "read write follow push";

const sharedApplication = new WeakMap<Ctx, ApplicationRow>();

/** The test client application of a server (created once). */
export async function testApplication(ctx: Ctx): Promise<ApplicationRow> {
  let app = sharedApplication.get(ctx);
  if (!app) {
    app = await insertApplication(ctx.db.kysely, {
      name: "Test Client",
      website: "https://client.example",
      redirectUris: ["urn:ietf:wg:oauth:2.0:oob"],
      scopes: ["read", "write", "follow", "push"],
    });
    sharedApplication.set(ctx, app);
  }
  return app;
}

export interface UserOptions {
  confirmed?: boolean;
  approved?: boolean;
  role?: "Owner" | "Admin" | "Moderator";
  locked?: boolean;
  scopes?: string;
}

/** Creates a local user with a token (confirmed and approved unless told otherwise). */
export async function createUser(ctx: Ctx, username: string, options: UserOptions = {}): Promise<TestUser> {
  const roleId = options.role ? (await findRoleByName(ctx.db.kysely, options.role))!.id : null;
  const { account, user } = await createLocalUser(ctx, {
    username,
    email: `${username}@rookery.test`,
    password: "correct horse battery staple",
    confirmed: options.confirmed ?? true,
    approved: options.approved ?? true,
    roleId,
    allowReserved: true,
  });
  let row = account;
  if (options.locked) {
    row = await ctx.db.kysely
      .updateTable("accounts")
      .set({ locked: true })
      .where("id", "=", account.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }
  const application = await testApplication(ctx);
  const { accessToken } = await issueAccessToken(ctx.db.kysely, {
    applicationId: application.id,
    userId: user.id,
    scopes: options.scopes ?? STANDARD_SCOPES,
  });
  return { account: row, user, token: accessToken, username };
}

/**
 * What the writer of remote posts is given for a plain public post at `uri` (no media, mentions,
 * tags or poll, published now); `fields` replaces any of it.
 */
export function remoteStatusData(uri: string, fields: Partial<RemoteStatusData> = {}): RemoteStatusData {
  return {
    uri,
    url: null,
    content: "<p>from afar</p>",
    spoilerText: "",
    sensitive: false,
    language: null,
    visibility: "public",
    parent: null,
    mentioned: [],
    tags: [],
    media: [],
    published: new Date(),
    editedAt: null,
    poll: null,
    ...fields,
  };
}

/** A remote account, as federation will store it. */
export async function createRemoteAccount(ctx: Ctx, username: string, domain: string): Promise<AccountRow> {
  const now = new Date().toISOString();
  const base = `https://${domain}`;
  return ctx.db.kysely
    .insertInto("accounts")
    .values({
      id: newId(),
      username,
      domain,
      display_name: username,
      uri: `${base}/users/${username}`,
      url: `${base}/@${username}`,
      inbox_url: `${base}/users/${username}/inbox`,
      shared_inbox_url: `${base}/inbox`,
      followers_url: `${base}/users/${username}/followers`,
      public_key: "-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----\n",
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

const madeAccounts = new WeakMap<Ctx, Promise<StandardAccounts>>();

/** The standard accounts (see the top of this file), made on the first call for a server and shared after. */
export function standardAccounts(ctx: Ctx): Promise<StandardAccounts> {
  let accounts = madeAccounts.get(ctx);
  if (!accounts) {
    accounts = makeStandardAccounts(ctx);
    madeAccounts.set(ctx, accounts);
  }
  return accounts;
}

async function makeStandardAccounts(ctx: Ctx): Promise<StandardAccounts> {
  const app = await testApplication(ctx);
  const alice = await createUser(ctx, "alice");
  const bob = await createUser(ctx, "bob");
  const carol = await createUser(ctx, "carol");
  const admin = await createUser(ctx, "admin", { role: "Admin" });
  const lucy = await createUser(ctx, "lucy", { locked: true });
  const rita = await createRemoteAccount(ctx, "rita", "remote.example");
  return { alice, bob, carol, admin, lucy, rita, app };
}

/** An app token (client_credentials kind: no user). */
export async function appToken(ctx: Ctx, scopes = "read write"): Promise<string> {
  const application = await testApplication(ctx);
  return (await issueAccessToken(ctx.db.kysely, { applicationId: application.id, userId: null, scopes })).accessToken;
}

/** A token for an existing user with the given scopes. */
export async function tokenFor(ctx: Ctx, user: TestUser | UserRow, scopes: string): Promise<string> {
  const application = await testApplication(ctx);
  const userId = "user" in user ? user.user.id : user.id;
  return (await issueAccessToken(ctx.db.kysely, { applicationId: application.id, userId, scopes })).accessToken;
}

/** Revokes a bearer token, as the user revoking the app's access would. */
export async function revokeToken(ctx: Ctx, token: string): Promise<void> {
  const now = new Date().toISOString();
  await ctx.db.kysely
    .updateTable("oauth_access_tokens")
    .set({ revoked_at: now })
    .where("token_digest", "=", digest(token))
    .execute();
}

export interface RequestOptions {
  token?: string;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as application/x-www-form-urlencoded (pairs keep Rails names such as `a[]`). */
  form?: Record<string, string | string[]> | Array<[string, string]>;
  /** Sent as multipart/form-data (file parts have a filename; an empty one is sent as browsers do). */
  parts?: MultipartPart[];
  body?: string | Buffer;
  headers?: Record<string, string>;
}

function encodeForm(form: NonNullable<RequestOptions["form"]>): string {
  const pairs: Array<[string, string]> = Array.isArray(form)
    ? form
    : Object.entries(form).flatMap(([k, v]) =>
        Array.isArray(v) ? v.map((x): [string, string] => [k, x]) : [[k, v] as [string, string]],
      );
  return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
}

/** One HTTP request through the app. */
export async function request(
  app: FastifyInstance,
  method: InjectOptions["method"],
  url: string,
  options: RequestOptions = {},
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let payload: string | Buffer | undefined = options.body;
  if (options.json !== undefined) {
    headers["content-type"] ??= "application/json";
    payload = JSON.stringify(options.json);
  } else if (options.form !== undefined) {
    headers["content-type"] ??= "application/x-www-form-urlencoded";
    payload = encodeForm(options.form);
  } else if (options.parts !== undefined) {
    const { body, contentType } = multipartBody(options.parts);
    headers["content-type"] ??= contentType;
    payload = body;
  }
  return app.inject({ method, url, headers, payload });
}

/** The routes of the app, read from Fastify's route tree: [method, path] pairs. */
export function routesOf(app: FastifyInstance): Array<[string, string]> {
  const routes: Array<[string, string]> = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split("\n")) {
    const match = /^([\s│├└─]*?)(?:[├└]── )(.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const level = Math.floor(match[1].length / 4);
    stack.length = level;
    stack[level] = match[2];
    const path = stack.join("").replace(/^\/+/, "/");
    for (const method of (match[3] ?? "").split(", ").filter(Boolean)) {
      if (method !== "HEAD" && method !== "OPTIONS") routes.push([method, path]);
    }
  }
  return routes;
}

export const get = (app: FastifyInstance, url: string, token?: string) => request(app, "GET", url, { token });

/** `[status, error text]` of a response, for one-line assertions on error shapes. */
export function errorOf(res: LightMyRequestResponse): [number, string] {
  const body = res.json() as { error?: unknown };
  return [res.statusCode, String(body.error)];
}

/** A multipart body built by hand (so tests can also send broken ones). */
export interface MultipartPart {
  name: string;
  value: string | Buffer;
  filename?: string;
  type?: string;
}

export function multipartBody(parts: MultipartPart[]): { body: Buffer; contentType: string } {
  const boundary = `----rookery${randomBytes(8).toString("hex")}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    // An empty filename is sent as such: it is how a browser sends a file input left empty.
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ""}`;
    const head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ""}\r\n`;
    chunks.push(
      Buffer.from(head),
      Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value),
      Buffer.from("\r\n"),
    );
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

// ---- The social graph. Stored as the app stores it; the signatures fit HTTP calls later. ----

type AnyAccount = TestUser | AccountRow;
const accountOf = (who: AnyAccount): AccountRow => ("account" in who ? who.account : who);

export interface FollowOptions {
  /** Show the target's boosts in the follower's home feed (default true). */
  showReblogs?: boolean;
  /** Notify the follower of the target's new posts (default false). */
  notify?: boolean;
  /** Only statuses in these ISO 639-1 languages reach the follower's feed (default: all). */
  languages?: string[];
}

/**
 * `follower` follows `target`, accepted at once, also when the target is locked (a pending request
 * between them is taken as accepted; `requestFollow` makes one that waits). Following twice is a
 * no-op; both accounts' counters move once, as Mastodon's do.
 */
export async function follow(
  server: TestServer,
  follower: AnyAccount,
  target: AnyAccount,
  options: FollowOptions = {},
): Promise<void> {
  const from = accountOf(follower);
  const to = accountOf(target);
  const now = new Date().toISOString();
  await server.ctx.db.kysely.transaction().execute(async (tx) => {
    await withdrawFollowRequest(tx, from, to);
    const inserted = await tx
      .insertInto("follows")
      .values({
        id: newId(),
        account_id: from.id,
        target_account_id: to.id,
        show_reblogs: options.showReblogs ?? true,
        notify: options.notify ?? false,
        languages: options.languages ? JSON.stringify(options.languages) : null,
        uri: from.domain ? `${from.uri}#follows/${newId()}` : null,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.columns(["account_id", "target_account_id"]).doNothing())
      .returning("id")
      .executeTakeFirst();
    if (!inserted) return;
    await moveFollowCounters(tx, from, to, 1);
    // As the follow service does: the account's recent posts join the follower's home feed.
    if (!from.domain) await mergeIntoHome(server.ctx, from.id, to.id, tx);
  });
}

async function withdrawFollowRequest(tx: Transaction<Database>, from: AccountRow, to: AccountRow) {
  await tx
    .deleteFrom("follow_requests")
    .where("account_id", "=", from.id)
    .where("target_account_id", "=", to.id)
    .execute();
}

/** The follower's following_count and the target's followers_count move by `by`. */
async function moveFollowCounters(tx: Transaction<Database>, from: AccountRow, to: AccountRow, by: 1 | -1) {
  await tx
    .updateTable("accounts")
    .set((eb) => ({ following_count: eb("following_count", "+", by) }))
    .where("id", "=", from.id)
    .execute();
  await tx
    .updateTable("accounts")
    .set((eb) => ({ followers_count: eb("followers_count", "+", by) }))
    .where("id", "=", to.id)
    .execute();
}

/**
 * `follower` stops following `target` (a pending request is withdrawn); the counters move back.
 * Not following is a no-op.
 */
export async function unfollow(server: TestServer, follower: AnyAccount, target: AnyAccount): Promise<void> {
  const from = accountOf(follower);
  const to = accountOf(target);
  await server.ctx.db.kysely.transaction().execute(async (tx) => {
    await withdrawFollowRequest(tx, from, to);
    const removed = await tx
      .deleteFrom("follows")
      .where("account_id", "=", from.id)
      .where("target_account_id", "=", to.id)
      .returning("id")
      .executeTakeFirst();
    if (!removed) return;
    await moveFollowCounters(tx, from, to, -1);
    await removeFromHome(tx, from.id, to.id);
  });
}

/**
 * `blocker` blocks `target`. As in Mastodon, follows and follow requests in either direction end.
 * Blocking twice is a no-op.
 */
export async function block(server: TestServer, blocker: AnyAccount, target: AnyAccount): Promise<void> {
  const from = accountOf(blocker);
  const to = accountOf(target);
  await unfollow(server, from, to);
  await unfollow(server, to, from);
  await server.ctx.db.kysely
    .insertInto("blocks")
    .values({
      id: newId(),
      account_id: from.id,
      target_account_id: to.id,
      uri: from.domain ? `${from.uri}#blocks/${newId()}` : null,
      created_at: new Date().toISOString(),
    })
    .onConflict((oc) => oc.columns(["account_id", "target_account_id"]).doNothing())
    .execute();
}

/**
 * `follower` asks to follow `target` and waits for approval (a locked account's pending request):
 * no follow, no counters. Asking again updates the request's settings.
 */
export async function requestFollow(
  server: TestServer,
  follower: AnyAccount,
  target: AnyAccount,
  options: FollowOptions = {},
): Promise<void> {
  const from = accountOf(follower);
  const to = accountOf(target);
  const now = new Date().toISOString();
  const settings = {
    show_reblogs: options.showReblogs ?? true,
    notify: options.notify ?? false,
    languages: options.languages ? JSON.stringify(options.languages) : null,
    updated_at: now,
  };
  await server.ctx.db.kysely
    .insertInto("follow_requests")
    .values({ id: newId(), account_id: from.id, target_account_id: to.id, uri: null, created_at: now, ...settings })
    .onConflict((oc) => oc.columns(["account_id", "target_account_id"]).doUpdateSet(settings))
    .execute();
}

export interface MuteOptions {
  /** Hide notifications from the muted account too (default true, as Mastodon). */
  notifications?: boolean;
  /** Seconds until the mute ends by itself; absent or 0: never. */
  duration?: number;
}

/** `muter` mutes `target`; muting again replaces the settings, as Mastodon does. */
export async function mute(
  server: TestServer,
  muter: AnyAccount,
  target: AnyAccount,
  options: MuteOptions = {},
): Promise<void> {
  const now = new Date();
  const settings = {
    hide_notifications: options.notifications ?? true,
    expires_at: options.duration ? new Date(now.getTime() + options.duration * 1000).toISOString() : null,
    updated_at: now.toISOString(),
  };
  await server.ctx.db.kysely
    .insertInto("mutes")
    .values({
      id: newId(),
      account_id: accountOf(muter).id,
      target_account_id: accountOf(target).id,
      created_at: now.toISOString(),
      ...settings,
    })
    .onConflict((oc) => oc.columns(["account_id", "target_account_id"]).doUpdateSet(settings))
    .execute();
}

/** `muter` lifts a mute of `target`; not muting is a no-op. */
export async function unmute(server: TestServer, muter: AnyAccount, target: AnyAccount): Promise<void> {
  await server.ctx.db.kysely
    .deleteFrom("mutes")
    .where("account_id", "=", accountOf(muter).id)
    .where("target_account_id", "=", accountOf(target).id)
    .execute();
}

/** `blocker` lifts a block on `target`; follows ended by the block stay ended. */
export async function unblock(server: TestServer, blocker: AnyAccount, target: AnyAccount): Promise<void> {
  await server.ctx.db.kysely
    .deleteFrom("blocks")
    .where("account_id", "=", accountOf(blocker).id)
    .where("target_account_id", "=", accountOf(target).id)
    .execute();
}

// ---- Content through the API. ----

/** Parameters of POST /api/v1/statuses as a client sends them (JSON). */
export interface StatusParams {
  status?: string;
  visibility?: Visibility;
  in_reply_to_id?: string;
  media_ids?: string[];
  sensitive?: boolean;
  spoiler_text?: string;
  language?: string;
  poll?: { options: string[]; expires_in: number | string; multiple?: boolean; hide_totals?: boolean };
  /** The accounts the client expects to mention; a post that would reach others is refused. */
  allowed_mentions?: string[];
}

/**
 * Posts a status as `author` (JSON, or form pairs such as `["poll[options][]", "a"]`) and asserts
 * it was created. For refused posts, send the request with `request` and check `errorOf`.
 */
export async function postStatus(
  server: TestServer,
  author: TestUser,
  params: StatusParams | Array<[string, string]>,
  headers?: Record<string, string>,
): Promise<Status> {
  const body = Array.isArray(params) ? { form: params } : { json: params };
  const res = await request(server.app, "POST", "/api/v1/statuses", { token: author.token, headers, ...body });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as Status;
}

export interface ImageOptions {
  width?: number;
  height?: number;
  format?: "png" | "jpeg";
  /** A CSS colour; the image is one flat colour. */
  color?: string;
  description?: string;
  /** "x,y", each from -1 to 1. */
  focus?: string;
}

const images = new Map<string, Promise<Buffer>>();

/** A flat-coloured image (made once per shape, since tests upload many). */
export function testImage(options: Pick<ImageOptions, "width" | "height" | "format" | "color"> = {}): Promise<Buffer> {
  const { width = 32, height = 24, format = "png", color = "#2a9d8f" } = options;
  const key = `${width}x${height}.${format}.${color}`;
  let image = images.get(key);
  if (!image) {
    const canvas = sharp({ create: { width, height, channels: 3, background: color } });
    image = (format === "png" ? canvas.png() : canvas.jpeg()).toBuffer();
    images.set(key, image);
  }
  return image;
}

/** Uploads an image as `owner` through POST /api/v2/media and asserts it was stored; it stays unattached. */
export async function uploadImage(
  server: TestServer,
  owner: TestUser,
  options: ImageOptions = {},
): Promise<MediaAttachment> {
  const format = options.format ?? "png";
  const file = await testImage(options);
  const parts: Parameters<typeof multipartBody>[0] = [
    { name: "file", value: file, filename: `image.${format === "png" ? "png" : "jpg"}`, type: `image/${format}` },
  ];
  if (options.description !== undefined) parts.push({ name: "description", value: options.description });
  if (options.focus !== undefined) parts.push({ name: "focus", value: options.focus });
  const { body, contentType } = multipartBody(parts);
  const headers = { "content-type": contentType };
  const res = await request(server.app, "POST", "/api/v2/media", { token: owner.token, body, headers });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as MediaAttachment;
}

export interface EmojiOptions {
  /** null (the default) for a local emoji. */
  domain?: string | null;
  /** Where the image is; without an `imageFile`, https://<domain or rookery.test>/emoji/<shortcode>.png by default. */
  imageRemoteUrl?: string | null;
  /** A stored image (a storage key such as custom_emojis/images/blobcat.png). */
  imageFile?: string | null;
  imageStaticFile?: string | null;
  disabled?: boolean;
  visibleInPicker?: boolean;
  category?: string | null;
}

/** Stores a custom emoji (the admin commands that import them are not what tests of posts are about). */
export async function createCustomEmoji(
  server: TestServer,
  shortcode: string,
  options: EmojiOptions = {},
): Promise<CustomEmojiRow> {
  const now = new Date().toISOString();
  const domain = options.domain ?? null;
  const imageUrl = options.imageFile ? null : `https://${domain ?? "rookery.test"}/emoji/${shortcode}.png`;
  return server.ctx.db.kysely
    .insertInto("custom_emojis")
    .values({
      id: newId(),
      shortcode,
      domain,
      uri: domain ? `https://${domain}/emojis/${shortcode}` : null,
      image_file: options.imageFile ?? null,
      image_static_file: options.imageStaticFile ?? null,
      image_remote_url: options.imageRemoteUrl === undefined ? imageUrl : options.imageRemoteUrl,
      disabled: options.disabled ?? false,
      visible_in_picker: options.visibleInPicker ?? true,
      category: options.category ?? null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** An account (or account ID) as the API shows it to anonymous readers, counters included. */
export async function accountJson(server: TestServer, account: AnyAccount | string): Promise<Account> {
  const id = typeof account === "string" ? account : accountOf(account).id;
  const res = await get(server.app, `/api/v1/accounts/${id}`);
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as Account;
}

/** A status as `reader` sees it (anonymous without a token); asserts it is visible. */
export async function statusJson(server: TestServer, id: string, reader?: TestUser | string): Promise<Status> {
  const res = await get(server.app, `/api/v1/statuses/${id}`, typeof reader === "string" ? reader : reader?.token);
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as Status;
}

/** How many status rows an account has (boosts and direct messages included), to prove a refusal stored nothing. */
export async function statusRowCount(server: TestServer, account: AnyAccount): Promise<number> {
  const row = await server.ctx.db.kysely
    .selectFrom("statuses")
    .select((eb) => eb.fn.countAll().as("n"))
    .where("account_id", "=", accountOf(account).id)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

// ---- The standard data set (documented at the top of this file). ----

export interface StandardData extends StandardAccounts {
  statuses: {
    alicePublic: Status;
    aliceUnlisted: Status;
    alicePrivate: Status;
    aliceDirect: Status;
    bobReply: Status;
  };
  media: { aliceUnattached: MediaAttachment };
  emoji: { blobcat: CustomEmojiRow };
}

const madeData = new WeakMap<TestServer, Promise<StandardData>>();

/** The standard accounts with their follows, statuses, media and emoji; built on the first call for a server. */
export function standardData(server: TestServer): Promise<StandardData> {
  let data = madeData.get(server);
  if (!data) {
    data = makeStandardData(server);
    madeData.set(server, data);
  }
  return data;
}

async function makeStandardData(server: TestServer): Promise<StandardData> {
  const accounts = await standardAccounts(server.ctx);
  const { alice, bob, carol, lucy, rita } = accounts;
  await follow(server, bob, alice);
  await follow(server, rita, alice);
  await follow(server, carol, lucy);
  await requestFollow(server, bob, lucy);
  await block(server, carol, rita);
  await mute(server, bob, carol);
  const blobcat = await createCustomEmoji(server, "blobcat");
  const alicePublic = await postStatus(server, alice, { status: "Hello from alice #introduction" });
  const aliceUnlisted = await postStatus(server, alice, { status: "Quietly unlisted", visibility: "unlisted" });
  const alicePrivate = await postStatus(server, alice, { status: "For my followers only", visibility: "private" });
  const aliceDirect = await postStatus(server, alice, { status: "@bob a secret between us", visibility: "direct" });
  const bobReply = await postStatus(server, bob, { status: "@alice welcome!", in_reply_to_id: alicePublic.id });
  const aliceUnattached = await uploadImage(server, alice, { description: "A teal rectangle" });
  return {
    ...accounts,
    statuses: { alicePublic, aliceUnlisted, alicePrivate, aliceDirect, bobReply },
    media: { aliceUnattached },
    emoji: { blobcat },
  };
}

// ---- The shared scope check (Mastodon's "forbidden for wrong scope" examples). ----

export const INVALID_TOKEN = "The access token is invalid";
export const REVOKED_TOKEN = "The access token was revoked";
export const OUTSIDE_SCOPES = "This action is outside the authorized scopes";
export const USER_REQUIRED = "This method requires an authenticated user";

export interface AuthCheck {
  /** The scope the route requires, e.g. `write:statuses`; its parent (`write`) must do as well. */
  scope: string;
  /** A user token is required: an app token holding the scope gets 422 (default). With false it is served. */
  user?: boolean;
  /** Callers without a token are served (optional authentication): a 2xx instead of 401. */
  anonymous?: boolean;
  /** Scopes that must not be enough; by default the other of read/write, `push`, and a sibling of `scope`. */
  insufficient?: string[];
  /**
   * Sends one request with `token` (undefined: none). `owner` is the user behind the scoped tokens
   * (made for the check); create what the request needs with `owner.token`, which holds every scope.
   */
  send: (server: TestServer, token: string | undefined, owner: TestUser) => Promise<LightMyRequestResponse>;
}

let checkedRoutes = 0;

function insufficientFor(scope: string): string[] {
  const [family, subject] = scope.split(":");
  const other = family === "read" ? "write" : "read";
  const siblings: readonly string[] = family === "read" ? READ_SCOPES : family === "write" ? WRITE_SCOPES : [];
  const sibling = subject ? siblings.find((s) => s !== scope) : undefined;
  return [other, "push", ...(sibling ? [sibling] : [])];
}

/**
 * A suite that checks how `route` answers each kind of caller: 401 without a (valid) token, 403 for
 * a token lacking the scope, 422 for an app token when a user is required, and success with the
 * scope or its parent. `server` is read when the tests run (servers are made in `before`).
 */
export function describeAuth(route: string, server: () => TestServer, check: AuthCheck): void {
  const needsUser = check.user ?? true;
  const ok = (res: LightMyRequestResponse, label: string) =>
    assert.ok(res.statusCode >= 200 && res.statusCode < 300, `${label}: ${res.statusCode} ${res.body}`);
  describe(`${route}: who may call it`, () => {
    let owner: TestUser;
    before(async () => {
      owner = await createUser(server().ctx, `scopecheck${++checkedRoutes}`);
    });

    const revoked = async () => {
      const token = await tokenFor(server().ctx, owner, check.scope);
      await revokeToken(server().ctx, token);
      return token;
    };

    if (check.anonymous) {
      // Mastodon ignores an unknown token on public endpoints, but not a revoked one.
      test("anonymous callers are served, also with an unknown token; a revoked token is 401", async () => {
        ok(await check.send(server(), undefined, owner), "no token");
        ok(await check.send(server(), "not-a-token", owner), "unknown token");
        assert.deepEqual(errorOf(await check.send(server(), await revoked(), owner)), [401, REVOKED_TOKEN]);
      });
    } else {
      test("401 without a token, with an unknown one or a revoked one", async () => {
        assert.deepEqual(errorOf(await check.send(server(), undefined, owner)), [401, INVALID_TOKEN]);
        assert.deepEqual(errorOf(await check.send(server(), "not-a-token", owner)), [401, INVALID_TOKEN]);
        assert.deepEqual(errorOf(await check.send(server(), await revoked(), owner)), [401, REVOKED_TOKEN]);
      });
    }

    test(`403 for a token without ${check.scope}`, async () => {
      for (const scopes of check.insufficient ?? insufficientFor(check.scope)) {
        const token = await tokenFor(server().ctx, owner, scopes);
        assert.deepEqual(errorOf(await check.send(server(), token, owner)), [403, OUTSIDE_SCOPES], scopes);
      }
    });

    test(`${check.scope} or the scope above it is enough`, async () => {
      for (const scopes of [check.scope, parentScope(check.scope)].filter((s) => s !== undefined)) {
        ok(await check.send(server(), await tokenFor(server().ctx, owner, scopes), owner), scopes);
      }
    });

    if (needsUser) {
      test("422 for an app token, which has no user", async () => {
        const token = await appToken(server().ctx, check.scope);
        assert.deepEqual(errorOf(await check.send(server(), token, owner)), [422, USER_REQUIRED]);
      });
    } else {
      test("an app token holding the scope is served", async () => {
        ok(await check.send(server(), await appToken(server().ctx, check.scope), owner), "app token");
      });
    }
  });
}

/** Runs `fn` with the clock moved forward (Date only; timers keep running). */
export async function later<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  mock.timers.enable({ apis: ["Date"], now: Date.now() + ms });
  try {
    return await fn();
  } finally {
    mock.timers.reset();
  }
}

/** Polls `check` every 20 ms until it holds; fails naming `what` after `ms` (never asserts on timing). */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
