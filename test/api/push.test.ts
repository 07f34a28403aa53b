/**
 * Web Push: subscription CRUD for the calling token (scope `push`), validation, the VAPID key in the
 * instance API and on applications, and delivery: a local push service receives each notification
 * encrypted (RFC 8291 aes128gcm and the older aesgcm), signed with the server's VAPID key, and the
 * test decrypts it; alerts and policy choose what is pushed; a 410 removes the subscription.
 */
import assert from "node:assert/strict";
import { createECDH, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import { Writable } from "node:stream";
import ece from "http_ece";
import { pino } from "pino";
import {
  createTestServer,
  createUser,
  describeAuth,
  errorOf,
  follow,
  get,
  postStatus,
  request,
  tokenFor,
  type TestServer,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";

interface Received {
  headers: IncomingMessage["headers"];
  body: Buffer;
  path: string;
}

/** A push service on loopback: records each message and answers with the status set for its path. */
class PushService {
  readonly server: Server;
  readonly received: Received[] = [];
  readonly statuses = new Map<string, number>();
  base = "";

  constructor() {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        this.received.push({ headers: req.headers, body: Buffer.concat(chunks), path: req.url ?? "" });
        res.writeHead(this.statuses.get(req.url ?? "") ?? 201);
        res.end();
      });
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
}

/** A browser's side of a subscription: its key pair and auth secret. */
function subscriberKeys() {
  const ecdh = createECDH("prime256v1");
  ecdh.generateKeys();
  const auth = randomBytes(16);
  return { ecdh, auth, p256dh: ecdh.getPublicKey().toString("base64url"), authText: auth.toString("base64url") };
}

function decrypt(message: Received, keys: ReturnType<typeof subscriberKeys>): Record<string, unknown> {
  const encoding = message.headers["content-encoding"];
  if (encoding === "aes128gcm")
    return JSON.parse(
      ece.decrypt(message.body, { version: "aes128gcm", privateKey: keys.ecdh, authSecret: keys.auth }).toString(),
    );
  assert.equal(encoding, "aesgcm");
  const salt = /salt=([^;,\s]+)/.exec(String(message.headers.encryption))?.[1];
  const dh = /dh=([^;,\s]+)/.exec(String(message.headers["crypto-key"]))?.[1];
  return JSON.parse(
    ece.decrypt(message.body, { version: "aesgcm", privateKey: keys.ecdh, dh, salt, authSecret: keys.auth }).toString(),
  );
}

describe("Web Push", () => {
  let server: TestServer;
  const logged: Array<{ level: number; msg: string; endpoint?: string }> = [];
  const service = new PushService();
  before(async () => {
    await service.start();
    const sink = new Writable({
      write(chunk, _encoding, callback) {
        for (const line of String(chunk).split("\n").filter(Boolean)) logged.push(JSON.parse(line));
        callback();
      },
    });
    server = await createTestServer({
      env: { ALLOWED_PRIVATE_ADDRESSES: "127.0.0.1" },
      log: pino({ level: "info" }, sink),
    });
  });
  after(async () => {
    await server.close();
    await new Promise((resolve) => service.server.close(resolve));
  });

  let users = 0;
  const user = (name = "user") => createUser(server.ctx, `${name}${++users}`);
  const subscribeAs = async (token: string, path: string, extra: object = {}, standard = true) => {
    const keys = subscriberKeys();
    const res = await request(server.app, "POST", "/api/v1/push/subscription", {
      token,
      json: {
        subscription: {
          endpoint: `${service.base}${path}`,
          keys: { p256dh: keys.p256dh, auth: keys.authText },
          standard,
        },
        ...extra,
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    return { keys, body: res.json() as Record<string, unknown> };
  };
  const messagesTo = (path: string) => service.received.filter((m) => m.path === path);

  test("subscribe, read, change alerts and policy, unsubscribe; GET without one is 404 Not Found", async () => {
    const owner = await user("subowner");
    const token = await tokenFor(server.ctx, owner, "push");
    assert.deepEqual(errorOf(await get(server.app, "/api/v1/push/subscription", token)), [404, "Not Found"]);
    const { body } = await subscribeAs(token, "/crud", {
      data: { alerts: { mention: true, follow: "1" }, policy: "followed" },
    });
    const instance = (await get(server.app, "/api/v2/instance")).json() as {
      configuration: { vapid: { public_key: string } };
    };
    assert.equal(body.server_key, instance.configuration.vapid.public_key);
    assert.match(String(body.server_key), /^[A-Za-z0-9_-]{80,}$/);
    assert.equal(body.endpoint, `${service.base}/crud`);
    assert.equal(body.standard, true);
    assert.equal(body.policy, "followed");
    const alerts = body.alerts as Record<string, boolean>;
    assert.equal(alerts.mention, true);
    assert.equal(alerts.follow, true);
    assert.equal(alerts.favourite, false);
    assert.deepEqual((await get(server.app, "/api/v1/push/subscription", token)).json(), body);

    const changed = (
      await request(server.app, "PUT", "/api/v1/push/subscription", {
        token,
        json: { data: { alerts: { favourite: true, mention: false }, policy: "all" } },
      })
    ).json() as Record<string, unknown>;
    assert.deepEqual(
      [
        (changed.alerts as Record<string, boolean>).favourite,
        (changed.alerts as Record<string, boolean>).mention,
        (changed.alerts as Record<string, boolean>).follow,
        changed.policy,
      ],
      [true, false, true, "all"],
    );
    // Another token of the same user has its own (no) subscription.
    const other = await tokenFor(server.ctx, owner, "push");
    assert.equal((await get(server.app, "/api/v1/push/subscription", other)).statusCode, 404);
    // Subscribing again replaces the subscription.
    const again = await subscribeAs(token, "/crud2");
    assert.notEqual(again.body.id, body.id);
    assert.equal(
      (await get(server.app, "/api/v1/push/subscription", token)).json<{ endpoint: string }>().endpoint,
      `${service.base}/crud2`,
    );
    assert.deepEqual((await request(server.app, "DELETE", "/api/v1/push/subscription", { token })).json(), {});
    assert.equal((await get(server.app, "/api/v1/push/subscription", token)).statusCode, 404);
    assert.equal(
      (await request(server.app, "PUT", "/api/v1/push/subscription", { token, json: { data: { policy: "all" } } }))
        .statusCode,
      404,
    );
  });

  test("validation: no subscription is 400; a bad endpoint, key, auth secret or policy is 422", async () => {
    const owner = await user("subinvalid");
    const token = await tokenFor(server.ctx, owner, "push");
    const keys = subscriberKeys();
    const post = (json: object) => request(server.app, "POST", "/api/v1/push/subscription", { token, json });
    assert.equal(errorOf(await post({}))[0], 400);
    const good = { endpoint: `${service.base}/x`, keys: { p256dh: keys.p256dh, auth: keys.authText } };
    for (const subscription of [
      { ...good, endpoint: "" },
      { ...good, endpoint: "ftp://push.example/x" },
      { ...good, keys: { ...good.keys, p256dh: "short" } },
      { ...good, keys: { ...good.keys, auth: randomBytes(8).toString("base64url") } },
      { ...good, keys: {} },
    ])
      assert.equal(errorOf(await post({ subscription }))[0], 422, JSON.stringify(subscription));
    assert.equal(errorOf(await post({ subscription: good, data: { policy: "friends" } }))[0], 422);
    assert.equal((await get(server.app, "/api/v1/push/subscription", token)).statusCode, 404, "nothing was stored");
  });

  test("keys in the standard base64 alphabet, padded or not, are accepted and work (Mastodon.py sends them)", async () => {
    const [receiver, sender] = await Promise.all([user("stdkeys"), user("stdsender")]);
    const standard = (bytes: Buffer, padded: boolean) => {
      const text = bytes.toString("base64");
      return padded ? text : text.replace(/=+$/, "");
    };
    for (const [path, padded] of [
      ["/std-padded", true],
      ["/std-bare", false],
    ] as const) {
      const keys = subscriberKeys();
      const token = await tokenFor(server.ctx, receiver, "push");
      const res = await request(server.app, "POST", "/api/v1/push/subscription", {
        token,
        form: {
          "subscription[endpoint]": `${service.base}${path}`,
          "subscription[keys][p256dh]": standard(keys.ecdh.getPublicKey(), padded),
          "subscription[keys][auth]": standard(keys.auth, padded),
          "data[alerts][mention]": "true",
          "subscription[standard]": "true",
        },
      });
      assert.equal(res.statusCode, 200, res.body);
      await postStatus(server, sender, { status: `@${receiver.username} ${path}` });
      await server.ctx.jobs.drain();
      const [message] = messagesTo(path);
      assert.ok(message, `pushed to ${path}`);
      assert.match(String(decrypt(message, keys).body), new RegExp(path));
    }
    // URL-safe with padding too.
    const keys = subscriberKeys();
    const padded = await request(server.app, "POST", "/api/v1/push/subscription", {
      token: await tokenFor(server.ctx, receiver, "push"),
      json: {
        subscription: {
          endpoint: `${service.base}/url-padded`,
          keys: { p256dh: `${keys.p256dh}=`, auth: `${keys.authText}==` },
        },
      },
    });
    assert.equal(padded.statusCode, 200, padded.body);
  });

  test("keys that are no P-256 point or no 16-byte secret are 422, in either alphabet", async () => {
    const owner = await user("badkeys");
    const token = await tokenFor(server.ctx, owner, "push");
    const keys = subscriberKeys();
    const offCurve = Buffer.from(keys.ecdh.getPublicKey());
    offCurve[40]! ^= 1;
    const compressed = keys.ecdh.getPublicKey(undefined, "compressed");
    const post = (p256dh: string, auth: string) =>
      request(server.app, "POST", "/api/v1/push/subscription", {
        token,
        json: { subscription: { endpoint: `${service.base}/bad`, keys: { p256dh, auth } } },
      });
    assert.deepEqual(errorOf(await post(offCurve.toString("base64"), keys.authText)), [
      422,
      "Validation failed: Key p256dh is not a valid P-256 public key",
    ]);
    assert.deepEqual(errorOf(await post(compressed.toString("base64url"), keys.authText)), [
      422,
      "Validation failed: Key p256dh is not a valid P-256 public key",
    ]);
    assert.deepEqual(errorOf(await post(`${keys.p256dh}!`, keys.authText)), [
      422,
      "Validation failed: Key p256dh is not a valid P-256 public key",
    ]);
    assert.deepEqual(errorOf(await post(keys.p256dh, randomBytes(15).toString("base64"))), [
      422,
      "Validation failed: Key auth must be 16 bytes",
    ]);
    assert.deepEqual(errorOf(await post(keys.p256dh, "a")), [422, "Validation failed: Key auth must be 16 bytes"]);
    assert.equal((await get(server.app, "/api/v1/push/subscription", token)).statusCode, 404, "nothing was stored");
  });

  test("an endpoint the SSRF guard refuses is removed at the first delivery, logged once at info, not retried", async () => {
    const [receiver, sender] = await Promise.all([user("ssrfreceiver"), user("ssrfsender")]);
    const token = await tokenFor(server.ctx, receiver, "push");
    const keys = subscriberKeys();
    const res = await request(server.app, "POST", "/api/v1/push/subscription", {
      token,
      json: {
        subscription: { endpoint: "http://169.254.169.254/push", keys: { p256dh: keys.p256dh, auth: keys.authText } },
        data: { alerts: { mention: true } },
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    const before = logged.length;
    await postStatus(server, sender, { status: `@${receiver.username} metadata?` });
    await server.ctx.jobs.drain();
    assert.equal((await get(server.app, "/api/v1/push/subscription", token)).statusCode, 404, "removed");
    const lines = logged.slice(before).filter((l) => l.endpoint === "169.254.169.254" || /push/.test(l.msg));
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg]),
      [[30, "push endpoint refused by the outbound address rules; subscription removed"]],
    );
    const failed = await server.ctx.db.kysely
      .selectFrom("jobs")
      .select(["attempts", "failed_at"])
      .where("name", "=", "push.deliver")
      .where("last_error", "is not", null)
      .execute();
    assert.deepEqual(failed, [], "no attempt failed");
  });

  test("a notification costs no job when its receiver has no subscription, and one push job per subscription once", async () => {
    const [quiet, subscribed, sender] = await Promise.all([user("nosub"), user("onesub"), user("subsender")]);
    await subscribeAs(await tokenFor(server.ctx, subscribed, "push"), "/once", { data: { alerts: { mention: true } } });
    const jobs = () => server.ctx.db.kysely.selectFrom("jobs").select(["id", "name"]).execute();
    await server.ctx.jobs.drain();
    await postStatus(server, sender, { status: `@${quiet.username} @${subscribed.username} hello` });
    // Every job the post causes, by ID, until none is left.
    const byId = new Map<string, string>();
    for (let left = await jobs(); left.length > 0; left = await jobs()) {
      for (const job of left) byId.set(job.id, job.name);
      const job = await server.ctx.jobs.claim();
      if (job) await server.ctx.jobs.perform(job);
    }
    const seen = [...byId.values()];
    assert.equal(seen.filter((name) => name === "push.deliver").length, 1, seen.join(", "));
    assert.ok(!seen.some((name) => name.startsWith("notification.created")), seen.join(", "));
    assert.equal(messagesTo("/once").length, 1);
  });

  test("the VAPID key is on applications too, and stays the same", async () => {
    const res = await request(server.app, "POST", "/api/v1/apps", {
      json: { client_name: "Pusher", redirect_uris: "urn:ietf:wg:oauth:2.0:oob", scopes: "read push" },
    });
    const key = (res.json() as { vapid_key: string }).vapid_key;
    const instance = (await get(server.app, "/api/v2/instance")).json() as {
      configuration: { vapid: { public_key: string } };
    };
    assert.equal(key, instance.configuration.vapid.public_key);
  });

  test("a mention is pushed encrypted (aes128gcm and aesgcm) with VAPID; the client decrypts it", async () => {
    const [receiver, sender] = await Promise.all([user("pushreceiver"), user("pushsender")]);
    const standardToken = await tokenFor(server.ctx, receiver, "push read");
    const legacyToken = await tokenFor(server.ctx, receiver, "push");
    const modern = await subscribeAs(standardToken, "/modern", { data: { alerts: { mention: true } } }, true);
    const legacy = await subscribeAs(legacyToken, "/legacy", { data: { alerts: { mention: true } } }, false);
    await postStatus(server, sender, { status: `@${receiver.username} ping` });
    await server.ctx.jobs.drain();
    const [modernMessage] = messagesTo("/modern");
    const [legacyMessage] = messagesTo("/legacy");
    assert.ok(modernMessage && legacyMessage, "both pushed");
    for (const [message, keys] of [
      [modernMessage, modern.keys],
      [legacyMessage, legacy.keys],
    ] as const) {
      const payload = decrypt(message, keys);
      assert.equal(payload.notification_type, "mention");
      assert.equal(typeof payload.notification_id, "string");
      assert.match(String(payload.title), /mentioned you/);
      assert.match(String(payload.body), /ping/);
      // RFC 8292 for aes128gcm; the draft form (WebPush JWT, key in Crypto-Key) with aesgcm, as web-push sends them.
      if (message.headers["content-encoding"] === "aes128gcm")
        assert.match(String(message.headers.authorization), /^vapid t=[^,]+, k=/);
      else {
        assert.match(String(message.headers.authorization), /^WebPush [\w-]+\.[\w-]+\.[\w-]+$/);
        assert.match(String(message.headers["crypto-key"]), /p256ecdsa=/);
      }
      assert.equal(message.headers.ttl, String(48 * 3600));
    }
    // The notification it names is the receiver's.
    const id = String(decrypt(modernMessage, modern.keys).notification_id);
    assert.equal((await get(server.app, `/api/v1/notifications/${id}`, receiver.token)).statusCode, 200);
  });

  test("alerts and policy choose what is pushed", async () => {
    const [receiver, friend, stranger] = await Promise.all([
      user("polreceiver"),
      user("polfriend"),
      user("polstranger"),
    ]);
    await follow(server, receiver, friend);
    const token = await tokenFor(server.ctx, receiver, "push");
    await subscribeAs(token, "/policy", { data: { alerts: { mention: true, favourite: false }, policy: "followed" } });
    const mine = await postStatus(server, receiver, { status: "mine" });
    await postStatus(server, friend, { status: `@${receiver.username} from a friend` });
    await postStatus(server, stranger, { status: `@${receiver.username} from a stranger` });
    await request(server.app, "POST", `/api/v1/statuses/${mine.id}/favourite`, { token: friend.token });
    await server.ctx.jobs.drain();
    assert.equal(messagesTo("/policy").length, 1, "only the friend's mention");
  });

  test("a push service answering 410 has its subscription removed", async () => {
    const [receiver, sender] = await Promise.all([user("goner"), user("gonesender")]);
    const token = await tokenFor(server.ctx, receiver, "push");
    service.statuses.set("/gone", 410);
    await subscribeAs(token, "/gone", { data: { alerts: { mention: true } } });
    await postStatus(server, sender, { status: `@${receiver.username} anyone?` });
    await server.ctx.jobs.drain();
    assert.equal(messagesTo("/gone").length, 1);
    assert.equal((await get(server.app, "/api/v1/push/subscription", token)).statusCode, 404);
  });

  test("WebPushSubscription matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    const owner = await user("pushschema");
    const token = await tokenFor(server.ctx, owner, "push");
    const { body } = await subscribeAs(token, "/schema");
    // Rookery's id is a string (docs/compatibility.md); compare the rest of the shape.
    assert.deepEqual(validateSchema("WebPushSubscription", body), []);
  });

  describeAuth("GET /api/v1/push/subscription", () => server, {
    scope: "push",
    insufficient: ["read", "write"],
    send: async (s, token, owner) => {
      if (token) {
        const keys = subscriberKeys();
        await request(s.app, "POST", "/api/v1/push/subscription", {
          token,
          json: {
            subscription: { endpoint: `${service.base}/auth`, keys: { p256dh: keys.p256dh, auth: keys.authText } },
          },
        });
      }
      void owner;
      return request(s.app, "GET", "/api/v1/push/subscription", { token });
    },
  });
});
