/**
 * Remote actors, as Mastodon, GoToSocial, Misskey and Akkoma serve them (fixtures written for the
 * tests from reference/federation.md §2 and §11), read by federation/actor_rows.ts and stored by the
 * one writer of remote accounts: their profile sanitized, their keys and collections kept, domain
 * blocks applied, bad or foreign keys refused, and the account then shown by the client API like
 * any other.
 */
import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { preloadedContexts, type DocumentLoader } from "@fedify/fedify";
import { isActor, Object as ApObject, type Actor } from "@fedify/vocab";
import { ActorRefused, remoteAccountData } from "../../src/federation/actor_rows.ts";
import { DomainSuspended, storeRemoteAccount } from "../../src/services/accounts/remote.ts";
import { ValidationFailed } from "../../src/errors.ts";
import { createTestServer, createUser, get, request, type TestServer, type TestUser } from "../kit.ts";

const FIXTURES = join(import.meta.dirname, "fixtures");
const LITEPUB = "https://akkoma.example/schemas/litepub-0.1.jsonld";

/** Contexts as Fedify preloads them, plus Akkoma's, recorded; nothing reaches the network. */
const contextLoader: DocumentLoader = async (url) => {
  if (url in preloadedContexts) return { contextUrl: null, documentUrl: url, document: preloadedContexts[url] };
  if (url === LITEPUB)
    return {
      contextUrl: null,
      documentUrl: url,
      document: JSON.parse(readFileSync(join(FIXTURES, "litepub-0.1.jsonld"), "utf8")),
    };
  throw new Error(`the test reached for ${url}`);
};

const publicKeyPem = () =>
  generateKeyPairSync("rsa", { modulusLength: 2048 }).publicKey.export({ type: "spki", format: "pem" }).toString();

/** A fixture with a fresh key, optionally changed, read as a Fedify actor. */
async function actorFrom(name: string, change: (json: Record<string, unknown>) => void = () => {}) {
  const pem = publicKeyPem();
  const json = JSON.parse(
    readFileSync(join(FIXTURES, `${name}.json`), "utf8").replace("__PUBLIC_KEY__", pem.replaceAll("\n", "\\n")),
  );
  change(json);
  const object = await ApObject.fromJsonLd(json, { documentLoader: contextLoader, contextLoader });
  assert.ok(isActor(object), `${name} is an actor`);
  return { actor: object as Actor, pem };
}

const read = (actor: Actor, domain?: string) =>
  remoteAccountData(actor, { documentLoader: contextLoader, contextLoader, domain });

describe("remote accounts from actor documents", () => {
  let server: TestServer;
  let viewer: TestUser;
  before(async () => {
    server = await createTestServer();
    viewer = await createUser(server.ctx, "viewer");
  });
  after(() => server.close());

  test("a Mastodon actor: handle, profile sanitized, fields, keys, collections, pictures, dates", async () => {
    const { actor, pem } = await actorFrom("mastodon_actor");
    const row = await storeRemoteAccount(server.ctx, await read(actor));
    assert.equal(row.username, "Gargron");
    assert.equal(row.domain, "mastodon.example");
    assert.equal(row.uri, "https://mastodon.example/users/Gargron");
    assert.equal(row.url, "https://mastodon.example/@Gargron");
    assert.equal(row.display_name, "Eugen Rochko");
    assert.match(row.note, /Founder of/);
    assert.doesNotMatch(row.note, /script|alert/);
    assert.equal(row.inbox_url, "https://mastodon.example/users/Gargron/inbox");
    assert.equal(row.shared_inbox_url, "https://mastodon.example/inbox");
    assert.equal(row.followers_url, "https://mastodon.example/users/Gargron/followers");
    assert.equal(row.featured_url, "https://mastodon.example/users/Gargron/collections/featured");
    assert.equal(row.public_key.trim(), pem.trim());
    assert.equal(row.private_key, null);
    assert.equal(row.actor_type, "Person");
    assert.equal(Boolean(row.locked), false);
    assert.equal(row.discoverable, true);
    assert.equal(Boolean(row.indexable), true);
    assert.equal(
      row.avatar_remote_url,
      "https://files.mastodon.example/accounts/avatars/000/000/001/original/avatar.png",
    );
    assert.equal(
      row.header_remote_url,
      "https://files.mastodon.example/accounts/headers/000/000/001/original/header.jpg",
    );
    assert.equal(new Date(row.created_at).toISOString(), "2016-03-16T00:00:00.000Z");
    const fields = JSON.parse(row.fields) as Array<{ name: string; value: string }>;
    assert.deepEqual(
      fields.map((f) => f.name),
      ["Patreon", "Homepage"],
    );
    assert.doesNotMatch(fields[0]!.value, /onclick/);

    // The client API shows it as any account: acct is user@domain.
    const json = (await get(server.app, `/api/v1/accounts/${row.id}`, viewer.token)).json() as Record<string, unknown>;
    assert.equal(json.acct, "Gargron@mastodon.example");
    assert.equal(json.display_name, "Eugen Rochko");
    // Its avatar is not kept here yet: the default picture, never the other server's URL.
    assert.equal(json.avatar, `${server.config.baseUrl}/avatars/original/missing.png`);
    const looked = await get(server.app, "/api/v1/accounts/lookup?acct=gargron@mastodon.example", viewer.token);
    assert.equal((looked.json() as { id: string }).id, row.id);
  });

  test("GoToSocial (no shared inbox, a locked account, a key at …/main-key)", async () => {
    const { actor } = await actorFrom("gotosocial_actor");
    const row = await storeRemoteAccount(server.ctx, await read(actor));
    assert.equal(row.username, "tobi");
    assert.equal(row.domain, "gts.example");
    assert.equal(row.shared_inbox_url, null);
    assert.equal(Boolean(row.locked), true);
    assert.equal(row.discoverable, false);
  });

  test("Misskey (a Service with a numeric id path, non-ASCII name, a WebP avatar)", async () => {
    const { actor } = await actorFrom("misskey_actor");
    const row = await storeRemoteAccount(server.ctx, await read(actor));
    assert.equal(row.username, "syuilo");
    assert.equal(row.uri, "https://misskey.example/users/9abc0001");
    assert.equal(row.actor_type, "Service");
    assert.equal(row.display_name, "しゅいろ");
    assert.equal(row.avatar_remote_url, "https://misskey.example/files/avatar.webp");
    assert.equal(row.header_remote_url, null);
    const json = (await get(server.app, `/api/v1/accounts/${row.id}`, viewer.token)).json() as { bot: boolean };
    assert.equal(json.bot, true);
  });

  test("Akkoma (its own litepub context, a profile URL equal to the actor id, HTML to sanitize)", async () => {
    const { actor } = await actorFrom("akkoma_actor");
    const row = await storeRemoteAccount(server.ctx, await read(actor));
    assert.equal(row.username, "lain");
    assert.equal(row.url, "https://akkoma.example/users/lain");
    assert.equal(row.shared_inbox_url, "https://akkoma.example/inbox");
    assert.doesNotMatch(row.note, /onerror/);
  });

  test("an update replaces the profile and keeps the account, its counters and its ID", async () => {
    const first = await storeRemoteAccount(server.ctx, await read((await actorFrom("gotosocial_actor")).actor));
    await server.ctx.db.kysely.updateTable("accounts").set({ followers_count: 7 }).where("id", "=", first.id).execute();
    const { actor } = await actorFrom("gotosocial_actor", (json) => {
      json.name = "Tobi Renamed";
      json.manuallyApprovesFollowers = false;
    });
    const again = await storeRemoteAccount(server.ctx, await read(actor));
    assert.equal(again.id, first.id);
    assert.equal(again.display_name, "Tobi Renamed");
    assert.equal(Boolean(again.locked), false);
    assert.equal(again.followers_count, 7);
  });

  test("an actor without its own key (owned by another, or on another server), an inbox or a username is refused", async () => {
    const foreignKey = await actorFrom("mastodon_actor", (json) => {
      (json.publicKey as Record<string, string>).owner = "https://mastodon.example/users/someone-else";
    });
    await assert.rejects(read(foreignKey.actor), ActorRefused);
    const keyElsewhere = await actorFrom("mastodon_actor", (json) => {
      (json.publicKey as Record<string, string>).id = "https://evil.example/keys/1";
    });
    await assert.rejects(read(keyElsewhere.actor), ActorRefused);
    const noInbox = await actorFrom("mastodon_actor", (json) => void delete json.inbox);
    await assert.rejects(read(noInbox.actor), ActorRefused);
    const noName = await actorFrom("mastodon_actor", (json) => void delete json.preferredUsername);
    await assert.rejects(read(noName.actor), ActorRefused);
  });

  test("a profile page on another host is ignored; hostile sizes are cut to Mastodon's bounds", async () => {
    const { actor } = await actorFrom("mastodon_actor", (json) => {
      json.id = "https://big.example/users/big";
      json.publicKey = { ...(json.publicKey as object), id: `${json.id}#main-key`, owner: json.id };
      json.preferredUsername = "big";
      json.url = "https://phishing.example/@big";
      json.name = "n".repeat(5000);
      json.attachment = Array.from({ length: 120 }, (_, i) => ({ type: "PropertyValue", name: `f${i}`, value: "v" }));
    });
    const row = await storeRemoteAccount(server.ctx, await read(actor));
    assert.equal(row.url, "https://big.example/users/big");
    assert.equal(row.display_name.length, 2048);
    assert.equal((JSON.parse(row.fields) as unknown[]).length, 50);
  });

  test("domain blocks apply: a suspended domain is refused, a silenced one is stored silenced", async () => {
    const admin = await createUser(server.ctx, "blockadmin", { role: "Admin", scopes: "admin:write" });
    for (const [domain, severity] of [
      ["suspended.example", "suspend"],
      ["quiet.example", "silence"],
    ])
      assert.equal(
        (
          await request(server.app, "POST", "/api/v1/admin/domain_blocks", {
            token: admin.token,
            form: { domain, severity },
          })
        ).statusCode,
        200,
      );
    const move = (host: string) => (json: Record<string, unknown>) => {
      json.id = `https://${host}/users/x`;
      json.publicKey = { ...(json.publicKey as object), id: `${json.id}#main-key`, owner: json.id };
      json.preferredUsername = "x";
      json.url = `https://${host}/@x`;
    };
    const suspended = await actorFrom("mastodon_actor", move("sub.suspended.example"));
    await assert.rejects(storeRemoteAccount(server.ctx, await read(suspended.actor)), DomainSuspended);
    const quiet = await actorFrom("mastodon_actor", move("quiet.example"));
    const row = await storeRemoteAccount(server.ctx, await read(quiet.actor));
    assert.ok(row.silenced_at);
  });

  test("another actor claiming a handle already held, or a malformed username, is refused", async () => {
    await storeRemoteAccount(server.ctx, await read((await actorFrom("akkoma_actor")).actor));
    const impostor = await actorFrom("akkoma_actor", (json) => {
      json.id = "https://akkoma.example/users/lain2";
      json.publicKey = { ...(json.publicKey as object), id: `${json.id}#main-key`, owner: json.id };
    });
    await assert.rejects(storeRemoteAccount(server.ctx, await read(impostor.actor)), ValidationFailed);
    const odd = await actorFrom("akkoma_actor", (json) => {
      json.id = "https://akkoma.example/users/odd";
      json.publicKey = { ...(json.publicKey as object), id: `${json.id}#main-key`, owner: json.id };
      json.preferredUsername = "bad name/../x";
    });
    await assert.rejects(storeRemoteAccount(server.ctx, await read(odd.actor)), ValidationFailed);
  });
});
