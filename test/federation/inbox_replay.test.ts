/**
 * Activities shaped the way Mastodon, GoToSocial, Misskey and Akkoma send them, replayed into a
 * Rookery behind TLS (https://rookery.test:PORT) by a fake fediverse (fake_remote.ts) that serves
 * the senders' actor documents, WebFinger and contexts over HTTPS, and signs each delivery for real
 * in the sender's own style (Mastodon's draft-cavage headers, GoToSocial's `hs2019` with a
 * `…/main-key` key id, RFC 9421). What each activity produced is read back through the client API
 * (or the database where the API cannot show it). Then the hostile cases: missing, stale, forged
 * or narrow signatures, activities and objects that are not their sender's, oversized and broken
 * bodies, actors behind private addresses, and signers on a suspended domain.
 *
 * Activities are handled by job workers after the 202, so results are awaited with `eventually`.
 * For "nothing happens" cases the sender then delivers a marker (a post addressed to @watcher) and
 * the test waits for it to be stored and for the federation queue to drain before asserting that
 * nothing else was stored: a test cannot pass merely by looking too early.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import tls from "node:tls";
import { after, before, describe, test } from "node:test";
import { getDocumentLoader, verifyRequest } from "@fedify/fedify";
import type { FastifyInstance } from "fastify";
import { pino } from "pino";
import { FEDERATION_JOB } from "../../src/federation/queue.ts";
import { DECODED_CREATE_JOB, type DecodedCreate } from "../../src/federation/inbox/decoded.ts";
import { INBOX_BODY_LIMIT } from "../../src/federation/routes.ts";
import { installOutboundAgent } from "../../src/services/http/outbound.ts";
import {
  accountJson,
  createTestServer,
  createUser,
  eventually,
  follow,
  postStatus,
  request,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import type { Account, Status, StatusEdit } from "../types.ts";
import {
  activity,
  ldSigned,
  nextId,
  startFakeRemote,
  type DeliverOptions,
  type FakeActor,
  type FakeRemote,
} from "./fake_remote.ts";
import { makePki, tlsFront, type Pki } from "./pki.ts";

/** Hosts the fake fediverse answers for on 127.0.0.1. */
const FAKE_HOSTS = [
  "mastodon.example",
  "gts.example",
  "misskey.example",
  "akkoma.example",
  "evil.example",
  "blocked.example",
  "sub.blocked.example",
];
/** Loopback, but not in ALLOWED_PRIVATE_ADDRESSES: the fake answers there too, Rookery must not go. */
const LOOPBACK_HOST = "private.example";
/** An intranet address (the fake is not there): Rookery must not even try. */
const INTRANET_HOST = "intranet.example";

const REFUSED = "inbox: activity refused";
/** The jobs a received activity becomes: Fedify's message, or a Create decoded on arrival. */
const INBOX_JOBS = [FEDERATION_JOB, DECODED_CREATE_JOB];
/** What src/federation/inbox/inbox.ts logs when a listener throws (Fedify then retries the activity). */
const FAILED = "inbox: an activity could not be handled";

/** What Fedify queues for a received activity (a retry has `attempt` > 0). */
interface InboxMessage {
  type?: string;
  attempt?: number;
  activity?: { id?: string };
}

interface Notification {
  type: string;
  account: Account;
  status?: Status;
}

describe("activities replayed as Mastodon, GoToSocial, Misskey and Akkoma send them", () => {
  let pki: Pki;
  let fake: FakeRemote;
  let front: tls.Server;
  let server: TestServer;
  let app: FastifyInstance;
  /** `rookery.test:PORT`. */
  let domain: string;
  const logs: Array<Record<string, unknown>> = [];

  let mastodon: FakeActor;
  let gts: FakeActor;
  let misskey: FakeActor;
  let akkoma: FakeActor;
  let evil: FakeActor;
  let blocked: FakeActor;
  let subBlocked: FakeActor;
  let loopback: FakeActor;
  let intranet: FakeActor;

  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let dave: TestUser;
  let erin: TestUser;
  let watcher: TestUser;
  let admin: TestUser;

  before(async () => {
    pki = makePki(["rookery.test", ...FAKE_HOSTS, LOOPBACK_HOST, INTRANET_HOST]);
    tls.setDefaultCACertificates([...tls.getCACertificates("default"), pki.caPem]);
    fake = await startFakeRemote(pki, ["127.0.0.2"]);
    let rookeryPort = 0;
    front = await tlsFront(pki, () => rookeryPort);
    domain = `rookery.test:${(front.address() as AddressInfo).port}`;
    const outbound = [
      "rookery.test=127.0.0.1",
      ...FAKE_HOSTS.map((host) => `${host}=127.0.0.1`),
      `${LOOPBACK_HOST}=127.0.0.2`,
      `${INTRANET_HOST}=10.0.0.1`,
    ].join(",");
    server = await createTestServer({
      env: {
        LOCAL_DOMAIN: domain,
        LOCAL_HTTPS: "true",
        ALLOWED_PRIVATE_ADDRESSES: "127.0.0.1/32",
        OUTBOUND_HOSTS: outbound,
      },
      // What Rookery logs is kept: refusals name the activity they refused.
      log: pino({ level: "info" }, { write: (line: string) => void logs.push(JSON.parse(line)) }),
    });
    app = server.app;
    await app.listen({ port: 0, host: "127.0.0.1" });
    rookeryPort = (app.server.address() as AddressInfo).port;
    await server.ctx.jobs.start({ concurrency: 4, pollInterval: 50 });
    // Every fetch() of this process (Rookery's and the fake's deliveries) goes by Rookery's rules.
    installOutboundAgent(server.config);

    [mastodon, gts, misskey, akkoma, evil, blocked, subBlocked, loopback, intranet] = await Promise.all([
      fake.addActor({ name: "mastodon", software: "mastodon", host: "mastodon.example" }),
      fake.addActor({ name: "gts", software: "gotosocial", host: "gts.example" }),
      fake.addActor({ name: "misskey", software: "misskey", host: "misskey.example" }),
      fake.addActor({ name: "akkoma", software: "akkoma", host: "akkoma.example" }),
      fake.addActor({ name: "evil", software: "mastodon", host: "evil.example", username: "mallory" }),
      fake.addActor({ name: "blocked", software: "mastodon", host: "blocked.example", username: "spammer" }),
      fake.addActor({ name: "subBlocked", software: "mastodon", host: "sub.blocked.example", username: "spammer" }),
      fake.addActor({ name: "loopback", software: "mastodon", host: LOOPBACK_HOST, username: "ghost" }),
      fake.addActor({ name: "intranet", software: "mastodon", host: INTRANET_HOST, username: "mole" }),
    ]);
    alice = await createUser(server.ctx, "alice");
    bob = await createUser(server.ctx, "bob");
    carol = await createUser(server.ctx, "carol");
    dave = await createUser(server.ctx, "dave");
    erin = await createUser(server.ctx, "erin");
    watcher = await createUser(server.ctx, "watcher");
    admin = await createUser(server.ctx, "admin", { role: "Admin" });
  });

  after(async () => {
    await server?.close();
    await new Promise((resolve) => front?.close(resolve));
    await fake?.close();
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  });

  // ---- Helpers ----

  /** The fixture placeholders every activity may use. */
  const vars = (extra: Record<string, string> = {}): Record<string, string> => ({
    mastodon: mastodon.origin,
    gts: gts.origin,
    misskey: misskey.origin,
    akkoma: akkoma.origin,
    rookery: server.config.baseUrl,
    rookeryDomain: domain,
    ...extra,
  });
  /** Placeholders for a mention of a local user. */
  const mentionOf = (user: TestUser) => ({
    mentioned: user.account.uri,
    mentionedUrl: `${server.config.baseUrl}/@${user.username}`,
    mentionedName: user.username,
  });

  const send = (path: string, body: unknown, actor: FakeActor, options: Partial<DeliverOptions> = {}) =>
    fake.deliver(server, path, body, { actor, ...options });

  async function accepted(path: string, body: unknown, actor: FakeActor, options: Partial<DeliverOptions> = {}) {
    const res = await send(path, body, actor, options);
    assert.equal(res.status, 202, `${path} answered ${res.status}: ${res.body}`);
  }

  const statusRow = (uri: string) =>
    server.ctx.db.kysely.selectFrom("statuses").selectAll().where("uri", "=", uri).executeTakeFirst();
  const accountRow = (uri: string) =>
    server.ctx.db.kysely.selectFrom("accounts").selectAll().where("uri", "=", uri).executeTakeFirst();

  async function stored(uri: string): Promise<string> {
    await eventually(async () => (await statusRow(uri)) !== undefined, `${uri} to be stored`);
    return (await statusRow(uri))!.id;
  }

  const getStatus = (id: string, viewer?: TestUser) =>
    request(app, "GET", `/api/v1/statuses/${id}`, { token: viewer?.token });

  async function statusAs(id: string, viewer?: TestUser): Promise<Status> {
    const res = await getStatus(id, viewer);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Status;
  }

  async function timeline(path: string, viewer?: TestUser): Promise<Status[]> {
    const res = await request(app, "GET", path, { token: viewer?.token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Status[];
  }

  async function notifications(viewer: TestUser, type: string): Promise<Notification[]> {
    const res = await request(app, "GET", `/api/v1/notifications?types[]=${type}`, { token: viewer.token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Notification[];
  }

  /** Waits for `viewer`'s notification of `type` about status `statusId` (notifications are made after the counters move). */
  async function notified(viewer: TestUser, type: string, statusId: string): Promise<Notification> {
    let found: Notification | undefined;
    await eventually(async () => {
      found = (await notifications(viewer, type)).find((n) => n.status?.id === statusId);
      return found !== undefined;
    }, `${viewer.username}'s ${type} notification`);
    return found!;
  }

  async function relationship(viewer: TestUser, id: string) {
    const res = await request(app, "GET", `/api/v1/accounts/relationships?id[]=${id}`, { token: viewer.token });
    assert.equal(res.statusCode, 200, res.body);
    return (res.json() as Array<{ following: boolean; requested: boolean; followed_by: boolean }>)[0]!;
  }

  /** `viewer` finds `handle` with search and resolve, as clients do (WebFinger, then the actor). */
  /** `user` follows `actor` (a request, then the actor's Accept). */
  async function followRemote(user: TestUser, actor: FakeActor, body: Record<string, unknown> = {}): Promise<string> {
    const found = await resolve(user, `@${actor.username}@${actor.host}:${fake.port}`);
    await request(app, "POST", `/api/v1/accounts/${found.id}/follow`, { token: user.token, json: body });
    let sent: Record<string, unknown> | undefined;
    await eventually(() => {
      sent = fake.posted("Follow").find((p) => p.json.actor === user.account.uri && p.json.object === actor.id)?.json;
      return sent !== undefined;
    }, "the Follow reaches the fake");
    const accept = activity("generic_accept_follow", {
      activityId: `${actor.id}#accepts/${nextId()}`,
      actor: actor.id,
      follow: String(sent!.id),
      follower: user.account.uri,
      followed: actor.id,
    });
    await accepted("/inbox", accept, actor);
    await eventually(async () => (await relationship(user, found.id)).following, "the follow is accepted");
    return found.id;
  }

  async function resolve(viewer: TestUser, handle: string): Promise<Account> {
    const res = await request(app, "GET", `/api/v2/search?q=${encodeURIComponent(handle)}&resolve=true&type=accounts`, {
      token: viewer.token,
    });
    assert.equal(res.statusCode, 200, res.body);
    const accounts = (res.json() as { accounts: Account[] }).accounts;
    assert.equal(accounts.length, 1, `${handle} found: ${res.body}`);
    return accounts[0]!;
  }

  async function dueFederationJobs(): Promise<number> {
    const rows = await server.ctx.db.kysely
      .selectFrom("jobs")
      .select(["run_at", "failed_at"])
      .where("name", "in", INBOX_JOBS)
      .execute();
    const now = Date.now();
    return rows.filter((row) => row.failed_at === null && new Date(row.run_at as string).getTime() <= now).length;
  }

  /**
   * `actor` delivers a marker (a post for @watcher) and we wait for it to be stored and for the
   * federation queue to drain: what `actor` delivered before has been handled by then.
   */
  async function settle(actor: FakeActor): Promise<void> {
    const n = nextId();
    const noteId = `${actor.id}/markers/${n}`;
    const marker = activity("generic_create_note", {
      activityId: `${noteId}/activity`,
      actor: actor.id,
      noteId,
      attributedTo: actor.id,
      mentioned: watcher.account.uri,
      text: `marker ${n}`,
    });
    await accepted("/users/watcher/inbox", marker, actor);
    await storedBy(`${noteId}/activity`, noteId);
    await eventually(async () => (await dueFederationJobs()) === 0, "the federation queue to drain");
  }

  /** The ids of inbox activities whose handling failed on Rookery's side and that wait to be tried again. */
  async function awaitingRetry(): Promise<string[]> {
    const rows = await server.ctx.db.kysely
      .selectFrom("jobs")
      .select(["name", "payload", "last_error"])
      .where("name", "in", INBOX_JOBS)
      .execute();
    const payloadOf = (row: { payload: unknown }) =>
      typeof row.payload === "string" ? JSON.parse(row.payload) : row.payload;
    return rows.flatMap((row) => {
      // A decoded Create is retried by the job queue: its row keeps the last error.
      if (row.name === DECODED_CREATE_JOB)
        return row.last_error === null ? [] : [(payloadOf(row) as DecodedCreate).activity];
      const message = payloadOf(row) as InboxMessage;
      return message?.type === "inbox" && (message.attempt ?? 0) > 0 ? [String(message.activity?.id)] : [];
    });
  }

  /** The names of the inbox jobs waiting now (which path each received activity took). */
  async function waitingInboxJobs(activityId: string): Promise<string[]> {
    const rows = await server.ctx.db.kysely
      .selectFrom("jobs")
      .select(["name", "payload"])
      .where("name", "in", INBOX_JOBS)
      .execute();
    return rows
      .filter((row) => {
        const payload = (typeof row.payload === "string" ? JSON.parse(row.payload) : row.payload) as {
          activity?: string | { id?: string };
        };
        const id = typeof payload.activity === "string" ? payload.activity : payload.activity?.id;
        return id === activityId;
      })
      .map((row) => row.name);
  }

  /** The status stored for `uri` once `activityId` is handled; fails fast if its handling failed instead. */
  async function storedBy(activityId: string, uri: string): Promise<string> {
    try {
      await eventually(
        async () => (await statusRow(uri)) !== undefined || (await awaitingRetry()).includes(activityId),
        `${uri} to be stored`,
      );
    } catch (error) {
      // What became of it, for whoever reads the failure: its jobs, and what was logged of it.
      const jobs = (
        await server.ctx.db.kysely
          .selectFrom("jobs")
          .select(["name", "attempts", "locked_until", "run_at", "last_error", "payload"])
          .execute()
      ).filter((job) => JSON.stringify(job.payload).includes(activityId));
      const said = logs.filter((entry) => JSON.stringify(entry).includes(activityId));
      const busy = await server.ctx.db.kysely
        .selectFrom("jobs")
        .select(["name", "locked_until", "run_at"])
        .where("locked_until", "is not", null)
        .execute();
      throw new Error(
        `${(error as Error).message}; its jobs: ${JSON.stringify(jobs.map((job) => ({ ...job, payload: undefined })))}; ` +
          `logged: ${JSON.stringify(said)}; jobs running: ${JSON.stringify(busy)}`,
      );
    }
    const row = await statusRow(uri);
    if (!row) {
      const failure = logs.findLast((entry) => entry.msg === FAILED)?.err as { stack?: string } | undefined;
      assert.fail(`${activityId} failed on Rookery's side (retried later): ${failure?.stack}`);
    }
    return row.id;
  }

  const refusalLogged = (activityId: string) =>
    logs.some((entry) => entry.msg === REFUSED && entry.activity === activityId);
  /** Asserts that none of these activities failed on Rookery's side (which leaves them waiting for a retry). */
  async function handledWithoutError(activities: Array<Record<string, unknown>>): Promise<void> {
    const waiting = new Set(await awaitingRetry());
    assert.deepEqual(
      activities.map((a) => String(a.id)).filter((id) => waiting.has(id)),
      [],
      "these activities failed and wait to be retried",
    );
  }

  /** A local status's counters as its author sees them. */
  const counts = async (id: string, viewer: TestUser) => {
    const status = await statusAs(id, viewer);
    return { favourites: status.favourites_count, reblogs: status.reblogs_count };
  };

  /** A Mastodon Create(Note) mentioning `user`, with its note id. */
  function mastodonCreate(user: TestUser, extra: Record<string, string> = {}) {
    const n = extra.n ?? nextId();
    const published = extra.published ?? new Date().toISOString();
    const body = activity("mastodon_create_note", vars({ n, published, ...mentionOf(user), ...extra }));
    return { n, published, body, noteId: `${mastodon.id}/statuses/${n}` };
  }

  /** A post of `actor`'s own, built from the generic fixture (`noteId` on its host unless told). */
  function genericCreate(actor: FakeActor, fields: Partial<Record<string, string>> = {}) {
    const n = nextId();
    const noteId = fields.noteId ?? `${actor.id}/statuses/${n}`;
    const activityId = fields.activityId ?? `${noteId}/activity`;
    const body = activity("generic_create_note", {
      activityId,
      actor: fields.actor ?? actor.id,
      noteId,
      attributedTo: fields.attributedTo ?? actor.id,
      mentioned: fields.mentioned ?? alice.account.uri,
      text: fields.text ?? `post ${n}`,
    });
    return { body, noteId, activityId };
  }

  // ---- Mastodon ----

  describe("Mastodon", () => {
    let noteN: string;
    let notePublished: string;
    let noteId: string;

    test("a Follow of an unlocked account makes a follow, answered by a signed Accept at the actor's inbox", async () => {
      const followActivity = activity("mastodon_follow", vars({ object: alice.account.uri }));
      await accepted("/users/alice/inbox", followActivity, mastodon);
      await eventually(async () => (await accountJson(server, alice.account.id)).followers_count === 1, "a follower");
      const gargron = await accountRow(mastodon.id);
      assert.ok(gargron, "the follower's account is stored");
      assert.equal(gargron.username, "Gargron");
      assert.equal(gargron.domain, `mastodon.example:${fake.port}`);
      const row = await server.ctx.db.kysely
        .selectFrom("follows")
        .selectAll()
        .where("account_id", "=", gargron.id)
        .where("target_account_id", "=", alice.account.id)
        .executeTakeFirst();
      assert.ok(row, "the follow is stored");
      assert.equal(row.uri, followActivity.id, "the follow keeps the Follow's id");
      assert.equal((await relationship(alice, gargron.id)).followed_by, true);

      let accept: ReturnType<FakeRemote["posted"]>[number] | undefined;
      await eventually(() => {
        accept = fake.posted("Accept").find((p) => (p.json.object as { id?: string })?.id === followActivity.id);
        return accept !== undefined;
      }, "the Accept to reach the fake Mastodon");
      assert.equal(accept!.host, "mastodon.example");
      assert.equal(accept!.path, new URL(mastodon.inbox).pathname, "delivered to the actor's inbox");
      // FEP-8b32: an object integrity proof by alice's Ed25519 key rides along.
      const proof = accept!.json.proof as
        { type?: string; cryptosuite?: string; verificationMethod?: string } | undefined;
      assert.equal(proof?.cryptosuite, "eddsa-jcs-2022");
      assert.ok(proof?.verificationMethod?.startsWith(alice.account.uri));
      assert.equal(accept!.json.actor, alice.account.uri);
      const embedded = accept!.json.object as Record<string, unknown>;
      assert.equal(embedded.type, "Follow");
      assert.equal(embedded.actor, mastodon.id);
      assert.equal(embedded.object, alice.account.uri);
      // The signature verifies with alice's key, fetched from Rookery.
      const headers = Object.entries(accept!.headers).filter(
        ([name]) => !["connection", "keep-alive", "transfer-encoding", "content-length"].includes(name),
      );
      const received = new Request(`${mastodon.origin}${accept!.path}`, {
        method: "POST",
        headers,
        body: accept!.body,
      });
      const loader = getDocumentLoader({ allowPrivateAddress: true });
      const key = await verifyRequest(received, { documentLoader: loader, contextLoader: loader });
      assert.ok(key, "the Accept is signed by a key Rookery serves");
      assert.equal(key.ownerId?.href, alice.account.uri);
    });

    test("a repeated Follow (a new id) keeps one follow and is accepted again", async () => {
      const again = activity("mastodon_follow", vars({ object: alice.account.uri }));
      await accepted("/users/alice/inbox", again, mastodon);
      await eventually(
        () => fake.posted("Accept").some((p) => (p.json.object as { id?: string })?.id === again.id),
        "a second Accept, naming the new Follow",
      );
      assert.equal((await accountJson(server, alice.account.id)).followers_count, 1);
      const gargron = (await accountRow(mastodon.id))!;
      assert.equal(gargron.following_count, 1);
    });

    test("a local user follows the Mastodon actor through WebFinger; Mastodon's Accept completes it", async () => {
      const found = await resolve(bob, `@Gargron@mastodon.example:${fake.port}`);
      assert.equal(found.acct, `Gargron@mastodon.example:${fake.port}`);
      assert.ok(
        fake.requests.some(
          (r) => r.host === "mastodon.example" && r.path.startsWith("/.well-known/webfinger?resource=acct%3AGargron"),
        ),
        "WebFinger was asked",
      );
      const res = await request(app, "POST", `/api/v1/accounts/${found.id}/follow`, { token: bob.token });
      assert.equal(res.statusCode, 200, res.body);
      let sent: Record<string, unknown> | undefined;
      await eventually(() => {
        sent = fake.posted("Follow").find((p) => p.json.actor === bob.account.uri)?.json;
        return sent !== undefined;
      }, "bob's Follow to reach the fake Mastodon");
      assert.equal(sent!.object, mastodon.id);
      const accept = activity("mastodon_accept_follow", vars({ follow: String(sent!.id), follower: bob.account.uri }));
      await accepted("/users/bob/inbox", accept, mastodon);
      await eventually(async () => (await relationship(bob, found.id)).following, "bob follows Gargron");
    });

    test("Create(Note): CW, sensitive, language, alt-texted image, hashtag and mention reach the follower's home", async () => {
      const create = mastodonCreate(alice);
      noteN = create.n;
      notePublished = create.published;
      noteId = create.noteId;
      await accepted("/inbox", create.body, mastodon);
      let status: Status | undefined;
      await eventually(async () => {
        status = (await timeline("/api/v1/timelines/home", bob)).find((s) => s.uri === noteId);
        return status !== undefined;
      }, "the post in bob's home timeline");
      const s = status!;
      assert.equal(s.account.acct, `Gargron@mastodon.example:${fake.port}`);
      assert.equal(s.visibility, "public");
      assert.equal(s.url, `${mastodon.origin}/@Gargron/${noteN}`);
      assert.match(s.content, /the rook moves in straight lines/);
      assert.match(s.content, /class="u-url mention"/);
      assert.equal(s.spoiler_text, "Chess spoilers");
      assert.equal(s.sensitive, true);
      assert.equal(s.language, "en");
      assert.equal(s.media_attachments.length, 1);
      const media = s.media_attachments[0]!;
      const imageUrl = `https://files.mastodon.example/media_attachments/files/${noteN}/original/rook.png`;
      assert.equal(media.type, "image");
      // Not kept here (yet): the media proxy's address, never the other server's.
      assert.equal(media.url, `${server.config.baseUrl}/media_proxy/${media.id}/original`);
      assert.equal(media.remote_url, imageUrl);
      assert.equal(media.description, "A black rook on a chessboard, seen from above");
      // What Fedify's vocabulary drops, read from the activity as sent (federation/raw_post.ts).
      assert.equal(media.blurhash, "UBL_:rOpGG-oBUNG,qRj2so|=eE1w^n4S5NH");
      assert.deepEqual(media.meta.focus, { x: 0, y: -0.5 });
      assert.equal(media.meta.original?.width, 640);
      assert.deepEqual(
        s.tags.map((t) => t.name.toLowerCase()),
        ["rookery"],
      );
      assert.deepEqual(
        s.mentions.map((m) => m.acct),
        ["alice"],
      );

      await eventually(
        async () => (await notifications(alice, "mention")).some((n) => n.status?.uri === noteId),
        "alice's mention notification",
      );
      const mention = (await notifications(alice, "mention")).find((n) => n.status?.uri === noteId)!;
      assert.equal(mention.account.acct, `Gargron@mastodon.example:${fake.port}`);
      const tagged = await timeline("/api/v1/timelines/tag/rookery", bob);
      assert.ok(
        tagged.some((t) => t.uri === noteId),
        "the hashtag timeline has it",
      );
    });

    test("Update(Note) edits the post and keeps its history", async () => {
      assert.ok(noteId, "the Create test ran");
      const update = activity(
        "mastodon_update_note",
        vars({ n: noteN, published: notePublished, text: "the rook also castles", ...mentionOf(alice) }),
      );
      await accepted("/inbox", update, mastodon);
      const id = (await statusRow(noteId))!.id;
      await eventually(async () => /also castles/.test((await statusAs(id, bob)).content), "the edit");
      const edited = await statusAs(id, bob);
      assert.notEqual(edited.edited_at, null);
      assert.equal(edited.spoiler_text, "");
      assert.equal(edited.media_attachments.length, 0);
      const history = await request(app, "GET", `/api/v1/statuses/${id}/history`, { token: bob.token });
      assert.equal(history.statusCode, 200, history.body);
      const versions = history.json() as StatusEdit[];
      assert.equal(versions.length, 2);
      assert.match(versions[0]!.content, /straight lines/);
      assert.equal(versions[0]!.spoiler_text, "Chess spoilers");
      assert.match(versions[1]!.content, /also castles/);
    });

    test("Delete(Tombstone) removes the post", async () => {
      assert.ok(noteId, "the Create test ran");
      const id = (await statusRow(noteId))!.id;
      await accepted("/inbox", activity("mastodon_delete_note", vars({ n: noteN })), mastodon);
      await eventually(async () => (await getStatus(id, bob)).statusCode === 404, "the post to be gone");
      assert.ok(!(await timeline("/api/v1/timelines/home", bob)).some((s) => s.uri === noteId));
      assert.equal(await statusRow(noteId), undefined);
    });

    test("Announce of a local post notifies its author and counts; Undo(Announce) takes it back", async () => {
      const post = await postStatus(server, alice, { status: "Boost me, Gargron" });
      const n = nextId();
      const announce = activity("mastodon_announce", vars({ n, object: post.uri, author: alice.account.uri }));
      await accepted("/inbox", announce, mastodon);
      await eventually(async () => (await counts(post.id, alice)).reblogs === 1, "reblogs_count 1");
      const notification = await notified(alice, "reblog", post.id);
      assert.equal(notification.account.acct, `Gargron@mastodon.example:${fake.port}`);

      const undo = activity("mastodon_undo_announce", vars({ n, object: post.uri, author: alice.account.uri }));
      await accepted("/inbox", undo, mastodon);
      await eventually(async () => (await counts(post.id, alice)).reblogs === 0, "reblogs_count back to 0");
      assert.equal(await statusRow(String(announce.id)), undefined, "the boost is gone");
    });

    test("Like (signed with RFC 9421, as Mastodon 4.5 can) notifies and counts; Undo(Like) takes it back", async () => {
      const post = await postStatus(server, alice, { status: "Like me, Gargron" });
      const n = nextId();
      await accepted("/inbox", activity("mastodon_like", vars({ n, object: post.uri })), mastodon, {
        spec: "rfc9421",
      });
      await eventually(async () => (await counts(post.id, alice)).favourites === 1, "favourites_count 1");
      const notification = await notified(alice, "favourite", post.id);
      assert.equal(notification.account.acct, `Gargron@mastodon.example:${fake.port}`);
      await accepted("/inbox", activity("mastodon_undo_like", vars({ n, object: post.uri })), mastodon);
      await eventually(async () => (await counts(post.id, alice)).favourites === 0, "favourites_count back to 0");
    });
  });

  // ---- GoToSocial ----

  describe("GoToSocial (hs2019, …/main-key, no shared inbox, signed fetches only)", () => {
    test("a request to follow the locked GTS account is accepted by GTS's Accept", async () => {
      const found = await resolve(dave, `@tobi@gts.example:${fake.port}`);
      assert.equal(found.locked, true);
      const gtsGets = fake.requests.filter(
        (r) => r.host === "gts.example" && r.method === "GET" && !r.path.startsWith("/.well-known/"),
      );
      assert.ok(gtsGets.length > 0, "Rookery fetched the GTS actor");
      assert.ok(
        gtsGets.every((r) => r.headers.signature || r.headers["signature-input"]),
        "every fetch from GTS was signed",
      );
      const res = await request(app, "POST", `/api/v1/accounts/${found.id}/follow`, { token: dave.token });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((await relationship(dave, found.id)).requested, true);
      let sent: ReturnType<FakeRemote["posted"]>[number] | undefined;
      await eventually(() => {
        sent = fake.posted("Follow").find((p) => p.json.actor === dave.account.uri);
        return sent !== undefined;
      }, "dave's Follow to reach GTS");
      assert.equal(sent!.path, "/users/tobi/inbox", "GTS has no shared inbox");
      const accept = activity(
        "gotosocial_accept_follow",
        vars({ follow: String(sent!.json.id), follower: dave.account.uri }),
      );
      await accepted("/users/dave/inbox", accept, gts);
      await eventually(async () => (await relationship(dave, found.id)).following, "dave follows tobi");
    });

    test("Create addressed to the followers collection only is private: the follower sees it, no one else", async () => {
      const n = nextId();
      const create = activity("gotosocial_create_followers_only", vars({ n, text: "only for my followers" }));
      const noteId = `${gts.id}/statuses/01J${n}`;
      await accepted("/users/dave/inbox", create, gts);
      let status: Status | undefined;
      await eventually(async () => {
        status = (await timeline("/api/v1/timelines/home", dave)).find((s) => s.uri === noteId);
        return status !== undefined;
      }, "the post in dave's home timeline");
      assert.equal(status!.visibility, "private");
      assert.match(status!.content, /only for my followers/);
      assert.equal(status!.account.acct, `tobi@gts.example:${fake.port}`);
      assert.equal((await getStatus(status!.id, erin)).statusCode, 404, "erin does not follow tobi");
      assert.equal((await getStatus(status!.id)).statusCode, 404, "anonymous readers do not see it");
      assert.ok(!(await timeline("/api/v1/timelines/public")).some((s) => s.uri === noteId));
    });
  });

  // ---- Misskey ----

  describe("polls", () => {
    test("votes: one Create per choice (Mastodon), or several choices in one Create (GoToSocial)", async () => {
      const poll = await postStatus(server, alice, {
        status: "Pick any",
        poll: { options: ["red", "green", "blue"], expires_in: 3600, multiple: true },
      });
      const vote = (actor: FakeActor, names: string[]) => ({
        "@context": "https://www.w3.org/ns/activitystreams",
        id: `${actor.id}#votes/${nextId()}`,
        type: "Create",
        actor: actor.id,
        to: alice.account.uri,
        object: names.map((name) => ({
          id: `${actor.id}#votes/${nextId()}`,
          type: "Note",
          name,
          attributedTo: actor.id,
          inReplyTo: poll.uri,
          to: alice.account.uri,
        })),
      });
      const single: Record<string, unknown> = vote(mastodon, ["green"]);
      const choice = (single.object as Array<{ id: string }>)[0]!;
      single.object = choice;
      await accepted("/inbox", single, mastodon);
      await accepted("/inbox", vote(gts, ["red", "blue"]), gts);
      await accepted("/inbox", vote(gts, ["red"]), gts);
      const pollId = (poll as unknown as { poll: { id: string } }).poll.id;
      await eventually(async () => {
        const now = (await request(app, "GET", `/api/v1/polls/${pollId}`, { token: alice.token })).json();
        return now.voters_count === 2 && now.votes_count === 3;
      }, "three votes by two voters");
      await settle(gts);
      const now = (await request(app, "GET", `/api/v1/polls/${pollId}`, { token: alice.token })).json();
      assert.deepEqual(
        now.options.map((o: { votes_count: number }) => o.votes_count),
        [1, 1, 1],
        "a repeated choice counts once",
      );
      assert.equal(await statusRow(choice.id), undefined, "no post stored");
    });
  });

  describe("Misskey", () => {
    test("a 'home' note (cc Public) is unlisted; _misskey_content and the quote are ignored gracefully", async () => {
      const found = await resolve(erin, `@syuilo@misskey.example:${fake.port}`);
      assert.equal(found.bot, true, "a Service is a bot");
      const row = await accountRow(misskey.id);
      await follow(server, erin, row!);
      const n = nextId();
      const quote = `${misskey.origin}/notes/quoted${n}`;
      const create = activity("misskey_create_note", vars({ n, quote, text: " unlisted" }));
      const noteId = `${misskey.origin}/notes/${n}`;
      await accepted("/inbox", create, misskey);
      const id = await stored(noteId);
      const status = await statusAs(id);
      assert.equal(status.visibility, "unlisted");
      assert.match(status.content, /Misskey から unlisted/);
      assert.doesNotMatch(status.content, /\$\[tada/, "the HTML content is shown, not the MFM source");
      assert.equal(status.account.acct, `syuilo@misskey.example:${fake.port}`);
      await eventually(
        async () => (await timeline("/api/v1/timelines/home", erin)).some((s) => s.uri === noteId),
        "the note in erin's home timeline",
      );
      assert.ok(!(await timeline("/api/v1/timelines/public")).some((s) => s.uri === noteId), "unlisted");
      assert.equal(await statusRow(quote), undefined, "the quoted note is not made up");
      await settle(misskey);
      await handledWithoutError([create]);
    });

    test("a Like with _misskey_reaction counts as a favourite", async () => {
      const post = await postStatus(server, alice, { status: "React to me, syuilo" });
      await accepted("/inbox", activity("misskey_like", vars({ n: nextId(), object: post.uri })), misskey);
      await eventually(async () => (await counts(post.id, alice)).favourites === 1, "favourites_count 1");
      const notification = await notified(alice, "favourite", post.id);
      assert.equal(notification.account.acct, `syuilo@misskey.example:${fake.port}`);
    });
  });

  // ---- Akkoma ----

  describe("Akkoma (litepub context)", () => {
    /** Akkoma's direct Create to `user`, with its note id. */
    function akkomaDirect(user: TestUser, text: string) {
      const uuid = randomUUID();
      const body = activity("akkoma_create_direct", vars({ uuid, text, ...mentionOf(user) }));
      return { body, noteId: `${akkoma.origin}/objects/${uuid}`, activityId: String(body.id) };
    }

    test('a Create as Akkoma sends it (litepub context, {"@language": "und"}) is stored, with no language', async () => {
      const create = akkomaDirect(carol, "hello from akkoma");
      await accepted("/inbox", create.body, akkoma);
      const id = await storedBy(create.activityId, create.noteId);
      assert.ok(
        fake.requests.some((r) => r.host === "akkoma.example" && r.path === "/schemas/litepub-0.1.jsonld"),
        "the litepub context was fetched from the Akkoma host",
      );
      // "und" is undetermined: Mastodon reads languages from contentMap keys only, and shows null.
      assert.equal((await statusAs(id, carol)).language, null);
    });

    test("a Create addressed only to a local user is direct: in their conversations, hidden from others", async () => {
      // Without the context's "@language": "und" (see the test above), to check the audience alone.
      const create = akkomaDirect(carol, "psst, just between us");
      create.body["@context"] = (create.body["@context"] as unknown[]).slice(0, 2);
      await accepted("/inbox", create.body, akkoma);
      await storedBy(create.activityId, create.noteId);
      let last: Status | undefined;
      await eventually(async () => {
        const res = await request(app, "GET", "/api/v1/conversations", { token: carol.token });
        const conversations = res.json() as Array<{ last_status: Status | null }>;
        last = conversations.find((c) => c.last_status?.uri === create.noteId)?.last_status ?? undefined;
        return last !== undefined;
      }, "the post in carol's conversations");
      assert.equal(last!.visibility, "direct");
      assert.match(last!.content, /just between us/);
      assert.equal(last!.account.acct, `lain@akkoma.example:${fake.port}`);
      assert.equal((await getStatus(last!.id, carol)).statusCode, 200);
      assert.equal((await getStatus(last!.id, bob)).statusCode, 404, "bob is not addressed");
      assert.equal((await getStatus(last!.id)).statusCode, 404, "nor are anonymous readers");
    });
  });

  // ---- Duplicates and order ----

  describe("where a received activity is read", () => {
    test("a Create of an embedded post is decoded on arrival; one that needs a fetch goes to Fedify's listeners; both are stored", async () => {
      const embedded = mastodonCreate(alice);
      const embeddedId = String(embedded.body.id);
      // The same post shape with its hashtag given only by a link: reading it would mean a fetch.
      const linked = mastodonCreate(alice);
      const linkedId = String(linked.body.id);
      const linkedNote = linked.body.object as Record<string, unknown>;
      linkedNote.tag = [
        ...(linkedNote.tag as { type?: string }[]).filter((tag) => tag.type !== "Hashtag"),
        `${mastodon.origin}/tags/rookery`,
      ];
      // Akkoma's own context is at a URL: it would have to be fetched.
      const uuid = randomUUID();
      const akkomaPost = activity(
        "akkoma_create_direct",
        vars({ uuid, text: "litepub needs its context", ...mentionOf(carol) }),
      );
      const akkomaId = String(akkomaPost.id);
      // Workers stopped: the queued jobs show which path each activity took.
      await server.ctx.jobs.stop();
      try {
        await accepted("/inbox", embedded.body, mastodon);
        await accepted("/inbox", linked.body, mastodon);
        await accepted("/inbox", akkomaPost, akkoma);
        assert.deepEqual(await waitingInboxJobs(embeddedId), [DECODED_CREATE_JOB]);
        assert.deepEqual(await waitingInboxJobs(linkedId), [FEDERATION_JOB]);
        assert.deepEqual(await waitingInboxJobs(akkomaId), [FEDERATION_JOB]);
      } finally {
        await server.ctx.jobs.start({ concurrency: 4, pollInterval: 50 });
      }
      const id = await storedBy(embeddedId, embedded.noteId);
      await storedBy(linkedId, linked.noteId);
      await storedBy(akkomaId, `${akkoma.origin}/objects/${uuid}`);
      // Both paths record a handled activity under one key (Fedify's): a copy that took the other path is skipped.
      const handled = async (activityId: string) =>
        (
          await server.ctx.db.kysely
            .selectFrom("federation_kv")
            .select("key")
            .where("key", "like", `_fedify/activityIdempotence/%/${encodeURIComponent(activityId)}`)
            .execute()
        ).map((row) => row.key.slice(0, -encodeURIComponent(activityId).length));
      await eventually(async () => (await handled(akkomaId)).length === 1, "the Akkoma Create recorded as handled");
      assert.deepEqual(await handled(embeddedId), await handled(akkomaId));
      // The decoded post reads as the listeners' path reads it (the Create test above checks it field by field).
      const status = await statusAs(id, alice);
      assert.equal(status.spoiler_text, "Chess spoilers");
      assert.equal(status.language, "en");
      assert.equal(status.media_attachments[0]?.blurhash, "UBL_:rOpGG-oBUNG,qRj2so|=eE1w^n4S5NH");
      assert.deepEqual(status.media_attachments[0]?.meta.focus, { x: 0, y: -0.5 });
      assert.deepEqual(
        status.mentions.map((m) => m.acct),
        ["alice"],
      );
      assert.deepEqual(
        status.tags.map((t) => t.name.toLowerCase()),
        ["rookery"],
      );
    });
  });

  describe("duplicates and order", () => {
    test("the same Create delivered three times (shared and personal inbox), and again once stored, is stored once", async () => {
      const before = (await accountRow(mastodon.id))!.statuses_count;
      const create = mastodonCreate(alice);
      await accepted("/inbox", create.body, mastodon);
      await accepted("/inbox", create.body, mastodon);
      await accepted("/users/alice/inbox", create.body, mastodon);
      await stored(create.noteId);
      // A copy after that is skipped (the activity is recorded as handled) or finds its post stored.
      await accepted("/users/alice/inbox", create.body, mastodon);
      await settle(mastodon);
      assert.deepEqual(await waitingInboxJobs(String(create.body.id)), []);
      const rows = await server.ctx.db.kysely
        .selectFrom("statuses")
        .select("id")
        .where("uri", "=", create.noteId)
        .execute();
      assert.equal(rows.length, 1);
      // The marker counts too.
      assert.equal((await accountRow(mastodon.id))!.statuses_count, before + 2);
      const mentions = async () =>
        (await notifications(alice, "mention")).filter((n) => n.status?.uri === create.noteId).length;
      await eventually(async () => (await mentions()) > 0, "alice's mention notification");
      assert.equal(await mentions(), 1, "one notification");
    });

    // Rookery's rule (inbox/statuses.ts onUpdate). Mastodon 4.x instead treats an Update of an
    // unknown post less than a day old as its Create (reference/federation.md §5.1, §12.2).
    test("an Update before its Create stores the post (Mastodon 4.x), unless the post is old; the late Create adds nothing", async () => {
      const n = nextId();
      const published = new Date().toISOString();
      const noteId = `${mastodon.id}/statuses/${n}`;
      const update = activity("mastodon_update_note", vars({ n, published, text: "too early", ...mentionOf(alice) }));
      await accepted("/inbox", update, mastodon);
      const id = await stored(noteId);
      assert.match((await statusAs(id, alice)).content, /too early/);
      await handledWithoutError([update]);
      const create = mastodonCreate(alice, { n, published });
      await accepted("/inbox", create.body, mastodon);
      await settle(mastodon);
      const rows = await server.ctx.db.kysely.selectFrom("statuses").select("id").where("uri", "=", noteId).execute();
      assert.deepEqual(
        rows.map((r) => r.id),
        [id],
      );

      const old = nextId();
      const lastYear = new Date(Date.now() - 365 * 24 * 3600 * 1000).toISOString();
      const stale = activity(
        "mastodon_update_note",
        vars({ n: old, published: lastYear, text: "from long ago", ...mentionOf(alice) }),
      );
      await accepted("/inbox", stale, mastodon);
      await settle(mastodon);
      assert.equal(await statusRow(`${mastodon.id}/statuses/${old}`), undefined);
      await handledWithoutError([stale]);
    });

    test("a Like of an unknown status (local or remote) is ignored without error", async () => {
      const gargron = (await accountRow(mastodon.id))!;
      const countFavourites = async () =>
        (
          await server.ctx.db.kysely
            .selectFrom("favourites")
            .select("id")
            .where("account_id", "=", gargron.id)
            .execute()
        ).length;
      const before = await countFavourites();
      const likes = [
        `${server.config.baseUrl}/users/alice/statuses/999999999999999999`,
        `${mastodon.id}/statuses/999999999999999999`,
      ].map((object) => activity("mastodon_like", vars({ n: nextId(), object })));
      for (const like of likes) await accepted("/inbox", like, mastodon);
      await settle(mastodon);
      assert.equal(await countFavourites(), before);
      await handledWithoutError(likes);
    });

    test("an Undo of a Follow that never happened changes nothing and fails nothing", async () => {
      const gargron = (await accountRow(mastodon.id))!;
      const undos = [carol.account.uri, `${server.config.baseUrl}/users/nobody`].map((object) =>
        activity("mastodon_undo_follow", vars({ n: nextId(), object })),
      );
      for (const undo of undos) await accepted("/users/carol/inbox", undo, mastodon);
      await settle(mastodon);
      assert.equal((await accountJson(server, carol.account.id)).followers_count, 0);
      assert.equal((await accountJson(server, alice.account.id)).followers_count, 1, "Gargron still follows alice");
      assert.equal((await accountRow(mastodon.id))!.following_count, gargron.following_count);
      await handledWithoutError(undos);
    });

    test("a Delete that arrives before its Create leaves no zombie (reference §3.4, §12.2)", async () => {
      const n = nextId();
      const noteId = `${mastodon.id}/statuses/${n}`;
      await accepted("/inbox", activity("mastodon_delete_note", vars({ n })), mastodon);
      await settle(mastodon);
      const create = mastodonCreate(alice, { n });
      await accepted("/inbox", create.body, mastodon);
      await settle(mastodon);
      assert.equal(await statusRow(noteId), undefined, "a post deleted by its author is not created afterwards");
    });
  });

  // ---- Hostile ----

  describe("accounts", () => {
    test("a Delete of the actor itself suspends the account and purges its follows and posts", async () => {
      const leaver = await fake.addActor({
        name: "leaver",
        software: "mastodon",
        host: "mastodon.example",
        username: "leaver",
      });
      const post = genericCreate(leaver, { text: "soon gone" });
      await accepted("/inbox", post.body, leaver);
      await stored(post.noteId);
      const account = (await accountRow(leaver.id))!;
      const followed = await request(app, "POST", `/api/v1/accounts/${account.id}/follow`, { token: watcher.token });
      assert.equal(followed.statusCode, 200, followed.body);
      const goodbye = activity("generic_delete", {
        activityId: `${leaver.id}#delete`,
        actor: leaver.id,
        object: leaver.id,
      });
      await accepted("/inbox", goodbye, leaver);
      await eventually(async () => (await statusRow(post.noteId)) === undefined, "the posts are purged");
      assert.ok((await accountRow(leaver.id))!.suspended_at, "the account is suspended");
      const shown = await request(app, "GET", `/api/v1/accounts/${account.id}`, { token: watcher.token });
      assert.equal(shown.json().suspended, true);
      const left = await server.ctx.db.kysely
        .selectFrom("follow_requests")
        .select("id")
        .where("target_account_id", "=", account.id)
        .execute();
      const follows = await server.ctx.db.kysely
        .selectFrom("follows")
        .select("id")
        .where("target_account_id", "=", account.id)
        .execute();
      assert.equal(left.length + follows.length, 0, "the follow (request) ended");
    });
  });

  describe("moves", () => {
    test("a Move to an account that names the old one moves the local followers there", async () => {
      const oldie = await fake.addActor({
        name: "oldie",
        software: "mastodon",
        host: "mastodon.example",
        username: "oldie",
      });
      const newbie = await fake.addActor({
        name: "newbie",
        software: "mastodon",
        host: "mastodon.example",
        username: "newbie",
      });
      fake.serve(newbie.id, { ...newbie.document, alsoKnownAs: [oldie.id] });
      const oldId = await followRemote(dave, oldie);
      const move = {
        "@context": "https://www.w3.org/ns/activitystreams",
        id: `${oldie.id}#moves/1`,
        type: "Move",
        actor: oldie.id,
        object: oldie.id,
        target: newbie.id,
      };
      await accepted("/inbox", move, oldie);
      await eventually(
        () => fake.posted("Follow").some((p) => p.json.actor === dave.account.uri && p.json.object === newbie.id),
        "dave asks to follow the new account",
      );
      await eventually(async () => !(await relationship(dave, oldId)).following, "dave left the old account");
      const shown = await request(app, "GET", `/api/v1/accounts/${oldId}`, { token: dave.token });
      assert.equal(shown.json().moved?.acct, `newbie@mastodon.example:${fake.port}`);
    });

    test("a Move to an account that does not name the old one is refused", async () => {
      const stayer = await fake.addActor({
        name: "stayer",
        software: "mastodon",
        host: "mastodon.example",
        username: "stayer",
      });
      const elsewhere = await fake.addActor({
        name: "elsewhere",
        software: "mastodon",
        host: "mastodon.example",
        username: "elsewhere",
      });
      const stayerId = await followRemote(erin, stayer);
      const move = {
        "@context": "https://www.w3.org/ns/activitystreams",
        id: `${stayer.id}#moves/1`,
        type: "Move",
        actor: stayer.id,
        object: stayer.id,
        target: elsewhere.id,
      };
      await accepted("/inbox", move, stayer);
      await settle(stayer);
      assert.equal((await relationship(erin, stayerId)).following, true);
      const shown = await request(app, "GET", `/api/v1/accounts/${stayerId}`, { token: erin.token });
      assert.equal(shown.json().moved, undefined);
    });
  });

  describe("notifications of other servers' posts", () => {
    /** The job names written for the status `statusId`, recorded from the time this is called. */
    function jobsWrittenFor(): (statusId: string) => string[] {
      const written: Array<{ name: string; payload: unknown }> = [];
      const queue = server.ctx.jobs;
      const enqueueWith = queue.enqueueWith.bind(queue);
      queue.enqueueWith = (db, name, payload, options) => {
        written.push({ name, payload });
        return enqueueWith(db, name, payload, options);
      };
      after(() => {
        queue.enqueueWith = enqueueWith;
      });
      return (statusId) =>
        written.filter((job) => (job.payload as { statusId?: string }).statusId === statusId).map((job) => job.name);
    }

    const postBy = (actor: FakeActor, text: string) => {
      const noteId = `${actor.id}/statuses/${nextId()}`;
      return {
        noteId,
        body: activity("generic_create_note", {
          activityId: `${noteId}/activity`,
          actor: actor.id,
          attributedTo: actor.id,
          noteId,
          published: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
          mentioned: gts.id,
          text,
        }),
      };
    };

    test("a post whose author a local follower rings the bell for notifies that follower; one that concerns nobody here writes no notifications job", async () => {
      const jobsFor = jobsWrittenFor();
      const belle = await fake.addActor({
        name: "belle",
        software: "mastodon",
        host: "mastodon.example",
        username: "belle",
      });
      const ringer = await createUser(server.ctx, "ringer");
      const quiet = await createUser(server.ctx, "quiet");
      await followRemote(ringer, belle, { notify: true });
      await followRemote(quiet, belle);
      const rung = postBy(belle, "the bell rings");
      await accepted("/inbox", rung.body, belle);
      const rungId = await stored(rung.noteId);
      await eventually(async () => {
        const res = await request(app, "GET", "/api/v1/notifications?types[]=status", { token: ringer.token });
        return (res.json() as Array<{ status?: { id: string } }>).some((n) => n.status?.id === rungId);
      }, "ringer's status notification");
      assert.ok(
        jobsFor(rungId).some((name) => name.endsWith(":notifications")),
        jobsFor(rungId).join(", "),
      );

      // Gargron: followed here (bob), nobody rings the bell, the post mentions nobody here.
      const plain = postBy(mastodon, "nothing for anyone here");
      await accepted("/inbox", plain.body, mastodon);
      const plainId = await stored(plain.noteId);
      // It reached the followers' homes with the post, in its transaction: no job for that either.
      const homes = await server.ctx.db.kysely
        .selectFrom("home_feed_entries")
        .select("account_id")
        .where("status_id", "=", plainId)
        .execute();
      assert.ok(
        homes.some((entry) => entry.account_id === bob.account.id),
        "bob's home has it",
      );
      assert.deepEqual(jobsFor(plainId), []);
      const quietNotes = await request(app, "GET", "/api/v1/notifications", { token: quiet.token });
      assert.deepEqual(quietNotes.json(), []);
    });
  });

  describe("hostile deliveries", () => {
    test("an unsigned POST is 401 and stores nothing", async () => {
      const create = mastodonCreate(alice);
      const res = await send("/inbox", create.body, mastodon, { spec: "none" });
      assert.equal(res.status, 401, res.body);
      await settle(mastodon);
      assert.equal(await statusRow(create.noteId), undefined);
    });

    test("a body changed after signing is 401", async () => {
      const create = mastodonCreate(alice);
      const res = await send("/inbox", create.body, mastodon, {
        tamper: (body) => body.replaceAll("straight lines", "crooked lines"),
      });
      assert.equal(res.status, 401, res.body);
      await settle(mastodon);
      assert.equal(await statusRow(create.noteId), undefined);
    });

    test("a signature dated two hours ago is 401", async () => {
      const create = mastodonCreate(alice);
      const res = await send("/inbox", create.body, mastodon, { date: new Date(Date.now() - 2 * 3600_000) });
      assert.equal(res.status, 401, res.body);
      await settle(mastodon);
      assert.equal(await statusRow(create.noteId), undefined);
    });

    test("an activity of actor Gargron signed with mallory's key is 401 (the key's owner is not the actor)", async () => {
      const create = mastodonCreate(alice);
      const res = await send("/inbox", create.body, evil);
      assert.equal(res.status, 401, res.body);
      await settle(mastodon);
      assert.equal(await statusRow(create.noteId), undefined);
    });

    /** A key document on evil.example (mallory's key) that claims Gargron as its owner. */
    function impostorKey(): string {
      const keyId = `${evil.origin}/keys/impostor`;
      fake.serve(keyId, {
        "@context": "https://w3id.org/security/v1",
        id: keyId,
        type: "CryptographicKey",
        owner: mastodon.id,
        publicKeyPem: (evil.document.publicKey as { publicKeyPem: string }).publicKeyPem,
      });
      return keyId;
    }

    // Mastodon fetches a key's owner and takes the key only if the owner's document lists it
    // (FetchRemoteKeyService#confirmed_owner?): a key document's own claim of an owner proves nothing.
    test("a key on evil.example whose document names Gargron as its owner cannot sign for Gargron", async () => {
      const create = mastodonCreate(alice);
      const res = await send("/inbox", create.body, evil, { keyId: impostorKey() });
      assert.ok(res.status === 401 || res.status === 202, `${res.status} ${res.body}`);
      await settle(mastodon);
      assert.equal(await statusRow(create.noteId), undefined, "mallory posted as Gargron");
    });

    test("nor can that key make a Linked Data signature for Gargron (sent without an HTTP signature)", async () => {
      const create = mastodonCreate(alice);
      const signed = await ldSigned(create.body, evil, impostorKey());
      const res = await send("/inbox", signed, evil, { spec: "none" });
      assert.ok(res.status === 401 || res.status === 202, `${res.status} ${res.body}`);
      await settle(mastodon);
      assert.equal(await statusRow(create.noteId), undefined, "mallory posted as Gargron");
    });

    test("mallory's Create of a Note with an id on mastodon.example attributed to Gargron stores nothing", async () => {
      const gargronBefore = (await accountRow(mastodon.id))!.statuses_count;
      const forged = genericCreate(evil, {
        activityId: `${evil.id}/statuses/${nextId()}/activity`,
        noteId: `${mastodon.id}/statuses/${nextId()}`,
        attributedTo: mastodon.id,
        text: "Gargron never wrote this",
      });
      const res = await send("/inbox", forged.body, evil);
      assert.ok(res.status === 202 || (res.status >= 400 && res.status < 500), `${res.status} ${res.body}`);
      await settle(evil);
      assert.equal(await statusRow(forged.noteId), undefined);
      assert.ok(
        !(await awaitingRetry()).includes(forged.activityId),
        "the forged activity is dropped, not retried (each retry fetches the Note from mastodon.example again)",
      );
      const mallory = (await accountRow(evil.id))!;
      const mallorys = await server.ctx.db.kysely
        .selectFrom("statuses")
        .select("uri")
        .where("account_id", "=", mallory.id)
        .execute();
      assert.deepEqual(
        mallorys.filter((s) => !s.uri?.includes("/markers/")),
        [],
        "mallory has no post but her markers",
      );
      assert.equal((await accountRow(mastodon.id))!.statuses_count, gargronBefore);
    });

    test("mallory's Create of a Note on her own host but attributed to Gargron is refused", async () => {
      const forged = genericCreate(evil, { attributedTo: mastodon.id, text: "Gargron never wrote this either" });
      await accepted("/inbox", forged.body, evil);
      await settle(evil);
      assert.equal(await statusRow(forged.noteId), undefined);
      assert.ok(refusalLogged(forged.activityId), "the refusal is logged");
    });

    test("an activity whose id is on another host than its actor stores nothing", async () => {
      const n = nextId();
      const create = genericCreate(mastodon, { activityId: `${evil.origin}/activities/${n}` });
      await accepted("/inbox", create.body, mastodon);
      await settle(mastodon);
      assert.equal(await statusRow(create.noteId), undefined);
      assert.ok(refusalLogged(create.activityId), "the refusal is logged");
    });

    test("mallory's Delete of Gargron's post leaves it in place", async () => {
      const create = mastodonCreate(alice);
      await accepted("/inbox", create.body, mastodon);
      const id = await stored(create.noteId);
      const activityId = `${evil.id}#deletes/${nextId()}`;
      const del = activity("generic_delete", { activityId, actor: evil.id, object: create.noteId });
      await accepted("/inbox", del, evil);
      await settle(evil);
      assert.equal((await getStatus(id, alice)).statusCode, 200, "the post stays");
      assert.ok(refusalLogged(activityId), "the refusal is logged");
    });

    test("mallory's Update of Gargron's post leaves it unchanged", async () => {
      const create = mastodonCreate(alice);
      await accepted("/inbox", create.body, mastodon);
      const id = await stored(create.noteId);
      // The genuine Note, for Fedify's fetch of an object embedded from another origin.
      fake.serve(create.noteId, {
        "@context": create.body["@context"],
        ...(create.body.object as Record<string, unknown>),
      });
      const activityId = `${evil.id}#updates/${nextId()}`;
      const update = activity("generic_update_note", {
        activityId,
        actor: evil.id,
        noteId: create.noteId,
        attributedTo: mastodon.id,
        text: "mallory was here",
        published: create.published,
        updated: new Date().toISOString(),
      });
      await accepted("/inbox", update, evil);
      await settle(evil);
      const status = await statusAs(id, alice);
      assert.doesNotMatch(status.content, /mallory/);
      assert.equal(status.edited_at, null);
      await handledWithoutError([update]);
    });

    test("mallory's Undo of Gargron's Like leaves the favourite in place", async () => {
      const post = await postStatus(server, alice, { status: "Gargron likes this" });
      const n = nextId();
      await accepted("/inbox", activity("mastodon_like", vars({ n, object: post.uri })), mastodon);
      await eventually(async () => (await counts(post.id, alice)).favourites === 1, "Gargron's favourite");
      await notified(alice, "favourite", post.id);
      const activityId = `${evil.id}#likes/${nextId()}/undo`;
      const undo = activity("generic_undo_like", {
        activityId,
        actor: evil.id,
        like: `${mastodon.id}#likes/${n}`,
        liker: mastodon.id,
        object: post.uri,
      });
      await accepted("/inbox", undo, evil);
      await settle(evil);
      assert.equal((await counts(post.id, alice)).favourites, 1);
      assert.ok(
        (await notifications(alice, "favourite")).some((f) => f.status?.id === post.id),
        "the notification stays",
      );
      await handledWithoutError([undo]);
    });

    test("mallory's Accept of erin's request to follow tobi does not make the follow", async () => {
      const tobi = (await accountRow(gts.id))!;
      const res = await request(app, "POST", `/api/v1/accounts/${tobi.id}/follow`, { token: erin.token });
      assert.equal(res.statusCode, 200, res.body);
      let sent: ReturnType<FakeRemote["posted"]>[number] | undefined;
      await eventually(() => {
        sent = fake.posted("Follow").find((p) => p.json.actor === erin.account.uri);
        return sent !== undefined;
      }, "erin's Follow to reach GTS");
      const activityId = `${evil.id}#accepts/follows/${nextId()}`;
      const forged = activity("generic_accept_follow", {
        activityId,
        actor: evil.id,
        follow: String(sent!.json.id),
        follower: erin.account.uri,
        followed: gts.id,
      });
      await accepted("/users/erin/inbox", forged, evil);
      await settle(evil);
      const state = await relationship(erin, tobi.id);
      assert.equal(state.following, false);
      assert.equal(state.requested, true);
      assert.ok(refusalLogged(activityId), "the refusal is logged");
    });

    test("an Announce of a followers-only or direct local post is not stored as a boost", async () => {
      const posts = [
        await postStatus(server, alice, { status: "Followers only, Gargron", visibility: "private" }),
        await postStatus(server, alice, { status: "@bob between us", visibility: "direct" }),
      ];
      const announces = posts.map((post) =>
        activity("mastodon_announce", vars({ n: nextId(), object: post.uri, author: alice.account.uri })),
      );
      for (const announce of announces) await accepted("/inbox", announce, mastodon);
      await settle(mastodon);
      for (const [i, post] of posts.entries()) {
        assert.equal((await counts(post.id, alice)).reblogs, 0);
        assert.equal(await statusRow(String(announces[i]!.id)), undefined);
      }
      assert.ok(!(await notifications(alice, "reblog")).some((n) => posts.some((p) => p.id === n.status?.id)));
      await handledWithoutError(announces);
    });

    test("a body of 1 MiB + 1 byte is 413 and stores nothing; exactly 1 MiB is taken", async () => {
      const padded = (limit: number) => {
        const create = mastodonCreate(alice);
        const base = JSON.stringify({ ...create.body, _padding: "" });
        const body = JSON.stringify({ ...create.body, _padding: "x".repeat(limit - Buffer.byteLength(base)) });
        assert.equal(Buffer.byteLength(body), limit);
        return { body, noteId: create.noteId };
      };
      // Straight to Rookery's port: through the test's TCP-level TLS front, an answer given before
      // the body was read races the upload (a buffering proxy such as nginx would not forward it).
      const via = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const tooLarge = padded(INBOX_BODY_LIMIT + 1);
      const res = await send("/inbox", tooLarge.body, mastodon, { via });
      assert.equal(res.status, 413, res.body);
      const largest = padded(INBOX_BODY_LIMIT);
      await accepted("/inbox", largest.body, mastodon, { via });
      await stored(largest.noteId);
      await settle(mastodon);
      assert.equal(await statusRow(tooLarge.noteId), undefined);
    });

    test("a signed body that is not JSON, or JSON that is no activity, is a 4xx, not a 5xx", async () => {
      for (const body of [
        "this is not JSON",
        '{"type": "Create", ',
        "[1, 2, 3]",
        '{"@context": 42, "type": "Create"}',
      ]) {
        const res = await send("/inbox", body, mastodon);
        assert.ok(res.status >= 400 && res.status < 500, `${JSON.stringify(body)} → ${res.status} ${res.body}`);
      }
    });

    for (const [label, name] of [
      ["loopback (127.0.0.2, reachable but not allowed)", "loopback"],
      ["intranet (10.0.0.1)", "intranet"],
    ] as const)
      test(`an actor whose key and inbox live on a ${label} address is refused, no account stored`, async () => {
        const actor = name === "loopback" ? loopback : intranet;
        const create = genericCreate(actor);
        const res = await send("/inbox", create.body, actor);
        assert.ok(res.status === 401 || res.status === 202, `${res.status} ${res.body}`);
        await settle(mastodon);
        assert.equal(await accountRow(actor.id), undefined);
        assert.equal(await statusRow(create.noteId), undefined);
        assert.ok(
          !fake.requests.some((r) => r.host === actor.host),
          "Rookery never reached the fake server through the private address",
        );
      });

    test("an RFC 9421 signature that does not cover content-digest, @method or @target-uri is 401", async () => {
      const all = ["@method", "@target-uri", "@authority", "content-digest"];
      // The same signer covering all of them is taken: the refusals below are about coverage.
      const control = mastodonCreate(alice);
      await accepted("/inbox", control.body, mastodon, { spec: "rfc9421", components: all });
      await stored(control.noteId);
      const creates = [];
      for (const missing of ["content-digest", "@method", "@target-uri"]) {
        const create = mastodonCreate(alice);
        creates.push(create);
        const res = await send("/inbox", create.body, mastodon, {
          spec: "rfc9421",
          components: all.filter((c) => c !== missing),
        });
        assert.equal(res.status, 401, `without ${missing}: ${res.status} ${res.body}`);
      }
      await settle(mastodon);
      for (const create of creates) assert.equal(await statusRow(create.noteId), undefined);
    });

    test("a signer on a suspended domain (or a subdomain of it) is 401; no account, no post, no fetch", async () => {
      const token = await tokenFor(server.ctx, admin, "admin:write:domain_blocks");
      const res = await request(app, "POST", "/api/v1/admin/domain_blocks", {
        token,
        json: { domain: "blocked.example", severity: "suspend" },
      });
      assert.equal(res.statusCode, 200, res.body);
      for (const actor of [blocked, subBlocked]) {
        const create = genericCreate(actor);
        const refused = await send("/inbox", create.body, actor);
        assert.equal(refused.status, 401, `${actor.host}: ${refused.status} ${refused.body}`);
        const refused9421 = await send("/inbox", genericCreate(actor).body, actor, { spec: "rfc9421" });
        assert.equal(refused9421.status, 401, `${actor.host} (RFC 9421): ${refused9421.status}`);
        assert.equal(await accountRow(actor.id), undefined);
        assert.equal(await statusRow(create.noteId), undefined);
      }
      await settle(mastodon);
      assert.ok(
        !fake.requests.some((r) => r.host.endsWith("blocked.example")),
        "nothing was fetched from the suspended domain",
      );
    });

    test("a Linked Data signature from the suspended domain, without an HTTP signature: no account, no post, no fetch", async () => {
      // The signer is in the body, not in the headers the early refusal reads.
      const create = genericCreate(blocked);
      const res = await send("/inbox", await ldSigned(create.body, blocked), blocked, { spec: "none" });
      assert.ok(res.status === 401 || res.status === 202, `${res.status} ${res.body}`);
      await settle(mastodon);
      assert.equal(await accountRow(blocked.id), undefined);
      assert.equal(await statusRow(create.noteId), undefined);
      const fetched = fake.requests.filter((r) => r.host.endsWith("blocked.example")).map((r) => r.path);
      assert.deepEqual(fetched, [], "nothing was fetched from the suspended domain");
    });
  });

  test("no activity of the replay failed on Rookery's side (none waits to be retried)", async () => {
    await eventually(async () => (await dueFederationJobs()) === 0, "the federation queue to drain");
    assert.deepEqual(await awaitingRetry(), []);
  });
});
