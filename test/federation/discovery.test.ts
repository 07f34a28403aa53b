/**
 * Discovery and actors, as other servers find local accounts: WebFinger (acct: with or without the
 * scheme, profile and actor URLs, any case of username and domain; 400, 404; the subscribe template
 * of the remote-follow page), host-meta in XRD and JSON, and the actor document behind WebFinger's
 * `self` (content negotiation, keys, profile).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createTestServer, createUser, get, request, type TestServer, type TestUser } from "../kit.ts";

const AP = "application/activity+json";
const LD = 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"';
const SUBSCRIBE = "http://ostatus.org/schema/1.0/subscribe";

interface Jrd {
  subject: string;
  aliases: string[];
  links: Array<{ rel: string; type?: string; href?: string; template?: string }>;
}

describe("WebFinger, host-meta and actors", () => {
  let server: TestServer;
  let alice: TestUser;
  before(async () => {
    server = await createTestServer();
    alice = await createUser(server.ctx, "Alice");
  });
  after(() => server.close());

  const finger = (resource?: string) =>
    get(
      server.app,
      `/.well-known/webfinger${resource === undefined ? "" : `?resource=${encodeURIComponent(resource)}`}`,
    );
  const actor = (path: string, accept = AP) => request(server.app, "GET", path, { headers: { accept } });

  test("acct:, bare and URL resources in any case name the account; self is the actor id byte for byte", async () => {
    for (const resource of [
      "acct:Alice@rookery.test",
      "acct:alice@ROOKERY.TEST",
      "alice@rookery.test",
      "@alice@rookery.test",
      "https://rookery.test/@alice",
      "https://rookery.test/users/Alice",
    ]) {
      const res = await finger(resource);
      assert.equal(res.statusCode, 200, `${resource}: ${res.body}`);
      assert.match(String(res.headers["content-type"]), /^application\/jrd\+json/);
      assert.equal(res.headers["cache-control"], "public, max-age=259200");
      assert.equal(res.headers["access-control-allow-origin"], "*");
      const jrd = res.json() as Jrd;
      assert.equal(jrd.subject, "acct:Alice@rookery.test");
      assert.deepEqual(jrd.aliases, ["https://rookery.test/@Alice", alice.account.uri]);
      assert.deepEqual(jrd.links, [
        { rel: "http://webfinger.net/rel/profile-page", type: "text/html", href: "https://rookery.test/@Alice" },
        { rel: "self", type: AP, href: alice.account.uri },
        { rel: SUBSCRIBE, template: "https://rookery.test/authorize_interaction?uri={uri}" },
      ]);
    }
  });

  test("the subscribe template leads to the remote-follow page (sign-in first, then back)", async () => {
    const jrd = (await finger("acct:alice@rookery.test")).json() as Jrd;
    const template = jrd.links.find((link) => link.rel === SUBSCRIBE)?.template;
    assert.ok(template);
    const filled = new URL(template.replace("{uri}", encodeURIComponent("acct:bob@elsewhere.example")));
    assert.equal(filled.origin, server.config.baseUrl);
    const res = await get(server.app, filled.pathname + filled.search);
    assert.equal(res.statusCode, 303);
    const signIn = new URL(String(res.headers.location), server.config.baseUrl);
    assert.equal(signIn.pathname, "/auth/sign_in");
    assert.equal(signIn.searchParams.get("return_to"), "/authorize_interaction?uri=acct%3Abob%40elsewhere.example");
  });

  test("a missing or unreadable resource is 400; another server's or an unknown user's is 404", async () => {
    assert.equal((await finger()).statusCode, 400);
    assert.equal((await finger("nonsense")).statusCode, 400);
    assert.equal((await finger("https://")).statusCode, 400);
    assert.equal((await finger("https://rookery.test/@%E0")).statusCode, 400, "broken percent-encoding");
    assert.equal((await finger("https://rookery.test/users/%")).statusCode, 400);
    for (const resource of [
      "acct:alice@elsewhere.example",
      "acct:nobody@rookery.test",
      "https://elsewhere.example/@alice",
      "https://rookery.test/about",
      "acct:alice@rookery.test@evil.example",
      `acct:${"a".repeat(500)}@rookery.test`,
    ]) {
      const res = await finger(resource);
      assert.equal(res.statusCode, 404, resource);
      assert.equal(res.headers["cache-control"], "public, max-age=180");
    }
  });

  test("host-meta points at WebFinger, in XRD or JSON", async () => {
    const template = "https://rookery.test/.well-known/webfinger?resource={uri}";
    const xrd = await get(server.app, "/.well-known/host-meta");
    assert.equal(xrd.statusCode, 200);
    assert.match(String(xrd.headers["content-type"]), /^application\/xrd\+xml/);
    assert.match(
      xrd.body,
      /<Link rel="lrdd" template="https:\/\/rookery\.test\/\.well-known\/webfinger\?resource=\{uri\}"\/>/,
    );
    const json = await request(server.app, "GET", "/.well-known/host-meta", {
      headers: { accept: "application/json" },
    });
    assert.deepEqual(json.json(), { links: [{ rel: "lrdd", template }] });
    assert.deepEqual((await get(server.app, "/.well-known/host-meta.json")).json(), {
      links: [{ rel: "lrdd", template }],
    });
  });

  test("the actor is served as ActivityPub JSON to activity+json and ld+json, with its key and collections", async () => {
    for (const accept of [AP, LD]) {
      const res = await actor("/users/Alice", accept);
      assert.equal(res.statusCode, 200, res.body);
      assert.match(String(res.headers["content-type"]), /^application\/(activity|ld)\+json/);
      const doc = res.json() as Record<string, unknown>;
      assert.equal(doc.id, alice.account.uri);
      assert.equal(doc.type, "Person");
      assert.equal(doc.preferredUsername, "Alice");
      assert.equal(doc.url, "https://rookery.test/@Alice");
      assert.equal(doc.inbox, `${alice.account.uri}/inbox`);
      assert.equal(doc.outbox, `${alice.account.uri}/outbox`);
      assert.equal(doc.followers, `${alice.account.uri}/followers`);
      assert.equal(doc.following, `${alice.account.uri}/following`);
      assert.equal(doc.featured, `${alice.account.uri}/collections/featured`);
      assert.deepEqual(doc.endpoints, { sharedInbox: "https://rookery.test/inbox" });
      assert.equal(doc.manuallyApprovesFollowers, false);
      const key = doc.publicKey as { id: string; owner: string; publicKeyPem: string };
      assert.equal(key.id, `${alice.account.uri}#main-key`);
      assert.equal(key.owner, alice.account.uri);
      assert.equal(key.publicKeyPem.trim(), alice.account.public_key.trim());
      assert.ok(!JSON.stringify(doc).includes("PRIVATE KEY"));
      // FEP-521a: both keys as Multikeys; the Ed25519 one (z6Mk…) signs object integrity proofs.
      const methods = doc.assertionMethod as Array<{ id: string; controller: string; publicKeyMultibase: string }>;
      assert.equal(methods.length, 2);
      assert.ok(methods.every((m) => m.controller === alice.account.uri));
      assert.ok(methods.some((m) => m.publicKeyMultibase.startsWith("z6Mk")));
    }
    const again = (await actor("/users/Alice", AP)).json() as {
      assertionMethod: Array<{ publicKeyMultibase: string }>;
    };
    assert.deepEqual(
      again.assertionMethod.map((m) => m.publicKeyMultibase),
      ((await actor("/users/Alice", AP)).json() as typeof again).assertionMethod.map((m) => m.publicKeyMultibase),
      "the Ed25519 key is made once",
    );
  });

  test("the profile shows in the actor: display name, bio, fields, locked; a bot is a Service", async () => {
    const bob = await createUser(server.ctx, "bobbot");
    const res = await request(server.app, "PATCH", "/api/v1/accounts/update_credentials", {
      token: bob.token,
      form: {
        display_name: "Bob the Bot",
        note: "Beep @Alice",
        bot: "true",
        locked: "true",
        "fields_attributes[0][name]": "Site",
        "fields_attributes[0][value]": "https://bob.example",
      },
    });
    assert.equal(res.statusCode, 200, res.body);
    const doc = (await actor("/users/bobbot")).json() as Record<string, unknown>;
    assert.equal(doc.type, "Service");
    assert.equal(doc.name, "Bob the Bot");
    assert.match(String(doc.summary), /Beep .*Alice/);
    assert.equal(doc.manuallyApprovesFollowers, true);
    // JSON-LD compacts a one-element array to its element; servers read either.
    const fields = [doc.attachment].flat() as Array<{ type: string; name: string; value: string }>;
    assert.equal(fields[0]?.type, "PropertyValue");
    assert.equal(fields[0]?.name, "Site");
    assert.match(fields[0]!.value, /href="https:\/\/bob\.example\/"/);
  });

  test("an unknown user or another case of the username is 404; a browser is sent to the profile page", async () => {
    assert.equal((await actor("/users/nobody")).statusCode, 404);
    assert.equal((await actor("/users/alice")).statusCode, 404, "an actor id is compared byte for byte");
    const html = await actor("/users/Alice", "text/html");
    assert.equal(html.statusCode, 301);
    assert.equal(html.headers.location, "/@Alice");
    const missing = await actor("/users/nobody", "text/html");
    assert.equal(missing.statusCode, 404);
    assert.match(String(missing.headers["content-type"]), /^text\/html/);
  });

  test("a suspended account's actor says so and shows no profile", async () => {
    const gone = await createUser(server.ctx, "suspendedone");
    await request(server.app, "PATCH", "/api/v1/accounts/update_credentials", {
      token: gone.token,
      form: { display_name: "Was Here" },
    });
    await server.ctx.db.kysely
      .updateTable("accounts")
      .set({ suspended_at: new Date().toISOString() })
      .where("id", "=", gone.account.id)
      .execute();
    const doc = (await actor("/users/suspendedone")).json() as Record<string, unknown>;
    assert.equal(doc.suspended, true);
    assert.ok(!doc.name, "no display name");
  });
});
