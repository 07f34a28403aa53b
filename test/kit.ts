/**
 * The test kit every test uses: a fresh app on a fresh database (SQLite in memory by default, a
 * private PostgreSQL schema when TEST_DATABASE_URL=postgres://…), the named standard accounts, and
 * request helpers that go through HTTP (Fastify's inject).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";
import pg from "pg";
import { pino } from "pino";
import { buildApp } from "../src/app.ts";
import { loadConfig, type Config } from "../src/config.ts";
import type { Ctx } from "../src/context.ts";
import { openDatabase } from "../src/db/connect.ts";
import { newId } from "../src/db/ids.ts";
import { migrateToLatest } from "../src/db/migrate.ts";
import type { AccountRow, ApplicationRow, UserRow } from "../src/db/schema.ts";
import { JobQueue } from "../src/jobs/queue.ts";
import { MemoryRateLimitStore } from "../src/api/rate_limit.ts";
import type { MailDomainChecker } from "../src/services/mail/domains.ts";
import { FileSystemStorage } from "../src/media/storage.ts";
import { registerJobHandlers } from "../src/jobs/handlers.ts";
import { createLocalUser } from "../src/services/accounts/create.ts";
import { findRoleByName } from "../src/services/accounts/roles.ts";
import { insertApplication } from "../src/services/auth/applications.ts";
import { issueAccessToken } from "../src/services/auth/tokens.ts";

/** Which engine this run uses: `sqlite` unless TEST_DATABASE_URL names a PostgreSQL database. */
export const TEST_ENGINE: "sqlite" | "postgres" = process.env.TEST_DATABASE_URL?.startsWith("postgres") ? "postgres" : "sqlite";

export interface TestServer {
  ctx: Ctx;
  app: FastifyInstance;
  config: Config;
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Extra environment for the configuration (e.g. DISALLOW_UNAUTHENTICATED_API_ACCESS). */
  env?: Record<string, string>;
  /** Add routes before the app is made ready (tests of the request plumbing use it). */
  routes?: (app: FastifyInstance, ctx: Ctx) => void | Promise<void>;
}

/** Tests never ask real DNS: domains under `.invalid` cannot receive mail, all others can. */
export const TEST_MAIL_DOMAINS: MailDomainChecker = { canReceiveMail: async (domain) => !domain.toLowerCase().endsWith(".invalid") };

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
  const log = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const db = await openDatabase(config.databaseUrl, { schema, poolSize: 4 });
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
  const ctx: Ctx = { config, db, jobs, log, rateLimits: new MemoryRateLimitStore(), mailDomains: TEST_MAIL_DOMAINS, media: new FileSystemStorage(config.mediaDir) };
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
    app = await insertApplication(ctx.db.kysely, { name: "Test Client", website: "https://client.example", redirectUris: ["urn:ietf:wg:oauth:2.0:oob"], scopes: ["read", "write", "follow", "push"] });
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
    row = await ctx.db.kysely.updateTable("accounts").set({ locked: true }).where("id", "=", account.id).returningAll().executeTakeFirstOrThrow();
  }
  const application = await testApplication(ctx);
  const { accessToken } = await issueAccessToken(ctx.db.kysely, { applicationId: application.id, userId: user.id, scopes: options.scopes ?? STANDARD_SCOPES });
  return { account: row, user, token: accessToken, username };
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

/** The named standard data set: alice, bob, carol, admin, lucy (locked) and rita@remote.example. */
export async function standardAccounts(ctx: Ctx): Promise<StandardAccounts> {
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

export interface RequestOptions {
  token?: string;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as application/x-www-form-urlencoded (pairs keep Rails names such as `a[]`). */
  form?: Record<string, string | string[]> | Array<[string, string]>;
  body?: string | Buffer;
  headers?: Record<string, string>;
}

function encodeForm(form: NonNullable<RequestOptions["form"]>): string {
  const pairs: Array<[string, string]> = Array.isArray(form)
    ? form
    : Object.entries(form).flatMap(([k, v]) => (Array.isArray(v) ? v.map((x): [string, string] => [k, x]) : [[k, v] as [string, string]]));
  return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
}

/** One HTTP request through the app. */
export async function request(app: FastifyInstance, method: InjectOptions["method"], url: string, options: RequestOptions = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let payload: string | Buffer | undefined = options.body;
  if (options.json !== undefined) {
    headers["content-type"] ??= "application/json";
    payload = JSON.stringify(options.json);
  } else if (options.form !== undefined) {
    headers["content-type"] ??= "application/x-www-form-urlencoded";
    payload = encodeForm(options.form);
  }
  return app.inject({ method, url, headers, payload });
}

export const get = (app: FastifyInstance, url: string, token?: string) => request(app, "GET", url, { token });

/** `[status, error text]` of a response, for one-line assertions on error shapes. */
export function errorOf(res: LightMyRequestResponse): [number, string] {
  const body = res.json() as { error?: unknown };
  return [res.statusCode, String(body.error)];
}

/** A multipart body built by hand (so tests can also send broken ones). */
export function multipartBody(parts: Array<{ name: string; value: string | Buffer; filename?: string; type?: string }>): { body: Buffer; contentType: string } {
  const boundary = `----rookery${randomBytes(8).toString("hex")}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename ? `; filename="${part.filename}"` : ""}`;
    const head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ""}\r\n`;
    chunks.push(Buffer.from(head), Buffer.isBuffer(part.value) ? part.value : Buffer.from(part.value), Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}
