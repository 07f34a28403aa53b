/**
 * Inbox POSTs and the signers' keys: a key is fetched once and then kept (no fetch per POST), a
 * rotated key is fetched again when the kept one stops verifying (and the old one is refused from
 * then on), a personal inbox exists only for a local user, and what is not an activity is a 400
 * before any key is fetched.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createUser, eventually, type TestServer } from "../kit.ts";
import {
  nextId,
  startServerBesideFakes,
  type FakeActor,
  type FakeRemote,
  type ServerBesideFakes,
} from "./fake_remote.ts";

const PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

describe("inbox signatures and keys", () => {
  let beside: ServerBesideFakes;
  let fake: FakeRemote;
  let server: TestServer;
  let actor: FakeActor;

  before(async () => {
    beside = await startServerBesideFakes(["keys.example"]);
    ({ server, fake } = beside);
    actor = await fake.addActor({ name: "rotating", software: "mastodon", host: "keys.example", username: "rot" });
    await createUser(server.ctx, "alice");
  });

  after(() => beside?.close());

  /** A public post by `by`, as Mastodon sends it. */
  function create(by: FakeActor) {
    const id = `${by.id}/statuses/${nextId()}`;
    const published = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    return {
      "@context": "https://www.w3.org/ns/activitystreams",
      id: `${id}/activity`,
      type: "Create",
      actor: by.id,
      published,
      to: [PUBLIC],
      cc: [by.followers],
      object: {
        id,
        type: "Note",
        attributedTo: by.id,
        content: "<p>key test</p>",
        published,
        to: [PUBLIC],
        cc: [by.followers],
      },
    };
  }

  const statusStored = async (uri: string) =>
    (await server.ctx.db.kysely.selectFrom("statuses").select("id").where("uri", "=", uri).executeTakeFirst()) !==
    undefined;

  const keyFetches = () =>
    fake.requests.filter((r) => r.method === "GET" && r.path === new URL(actor.id).pathname).length;

  test("the signer's key is fetched once, then kept: later POSTs fetch nothing", async () => {
    const first = create(actor);
    assert.equal((await fake.deliver(server, "/inbox", first, { actor })).status, 202);
    await eventually(() => statusStored(first.object.id), "the first post");
    const fetched = keyFetches();
    assert.ok(fetched >= 1, "the key was fetched");
    const more = [create(actor), create(actor), create(actor)];
    for (const activity of more) assert.equal((await fake.deliver(server, "/inbox", activity, { actor })).status, 202);
    for (const activity of more) await eventually(() => statusStored(activity.object.id), "each post");
    assert.equal(keyFetches(), fetched, "no fetch of the key per POST");
  });

  test("a rotated key is fetched again when the kept one fails; the old key is refused after", async () => {
    const old = actor;
    // The same actor and key id, a new key pair (what `tootctl accounts rotate` does).
    const rotated = await fake.addActor({
      name: "rotating",
      software: "mastodon",
      host: "keys.example",
      username: "rot",
    });
    assert.equal(rotated.keyId, old.keyId);
    const before = keyFetches();
    const signedNew = create(rotated);
    const res = await fake.deliver(server, "/inbox", signedNew, { actor: rotated });
    assert.equal(res.status, 202, res.body);
    await eventually(() => statusStored(signedNew.object.id), "the post signed with the new key");
    assert.ok(keyFetches() > before, "the key was fetched again");
    const signedOld = create(old);
    const refused = await fake.deliver(server, "/inbox", signedOld, { actor: old });
    assert.equal(refused.status, 401, refused.body);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(await statusStored(signedOld.object.id), false);
    actor = rotated;
  });

  test("a personal inbox takes activities for a local user only", async () => {
    const toAlice = create(actor);
    assert.equal((await fake.deliver(server, "/users/alice/inbox", toAlice, { actor })).status, 202);
    await eventually(() => statusStored(toAlice.object.id), "the post sent to alice's inbox");
    const res = await fake.deliver(server, "/users/nobody/inbox", create(actor), { actor });
    assert.equal(res.status, 404);
  });

  test("JSON that is no activity is 400, before any key is fetched", async () => {
    const before = keyFetches();
    for (const body of [
      [],
      '"text"',
      { type: "Create" },
      { actor: actor.id },
      { type: 5, actor: actor.id },
      { type: "Create", actor: "not a url" },
      { type: "Create", actor: actor.id, id: 42 },
    ]) {
      const res = await fake.deliver(server, "/inbox", body, { actor });
      assert.equal(res.status, 400, `${JSON.stringify(body)} → ${res.status} ${res.body}`);
      assert.equal(typeof (JSON.parse(res.body) as { error?: unknown }).error, "string");
    }
    assert.equal(keyFetches(), before);
  });
});
