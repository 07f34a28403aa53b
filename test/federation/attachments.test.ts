/**
 * What Fedify's vocabulary has no field for, both ways, between a Rookery behind TLS and a fake
 * fediverse (fake_remote.ts): attachments' `blurhash` and `focalPoint` (Mastodon's `toot:` terms),
 * and the name of a post's thread (`conversation`, `context`).
 *
 * Sent: the Create a follower's server receives — also when it goes to five servers and more,
 * Fedify's fan-out — the Update of an edit, the Note at its id and the outbox carry them, with
 * their terms defined in `@context`; the object integrity proof and the Linked Data signature
 * verify, and fail once the blurhash is changed (so both cover it). A reply names its thread as
 * the server the thread began on does.
 *
 * Received: Mastodon's and Akkoma's attachments (Akkoma's context does not define `blurhash`;
 * Mastodon reads it by name, and so does Rookery) show their blurhash and focus in the client
 * API, from a delivered post and from one fetched by its link; values that are no blurhash or
 * out of range are not kept. A remote post whose parent this server lacks joins the conversation
 * its thread's name points to: a thread first seen elsewhere, or one begun here.
 */
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import tls from "node:tls";
import { after, before, describe, test } from "node:test";
import { detachSignature, getDocumentLoader, verifyJsonLd, verifyObject } from "@fedify/fedify";
import { Activity } from "@fedify/vocab";
import { encode as encodeBlurhash } from "blurhash";
import type { FastifyInstance } from "fastify";
import { installOutboundAgent } from "../../src/services/http/outbound.ts";
import {
  createTestServer,
  createUser,
  eventually,
  postStatus,
  request,
  uploadImage,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import type { MediaAttachment, Status } from "../types.ts";
import { activity, nextId, startFakeRemote, type FakeActor, type FakeRemote } from "./fake_remote.ts";
import { makePki, tlsFront, type Pki } from "./pki.ts";

const FANS = ["fan1.example", "fan2.example", "fan3.example", "fan4.example", "fan5.example"];
const FAKE_HOSTS = ["mastodon.example", "akkoma.example", ...FANS];
const AP = { accept: "application/activity+json" };
/** Mastodon's blurhash in fixtures/activities/mastodon_create_note.json. */
const MASTODON_BLURHASH = "UBL_:rOpGG-oBUNG,qRj2so|=eE1w^n4S5NH";

type Json = Record<string, any>;

const asArray = (value: unknown): Json[] =>
  Array.isArray(value) ? value : value === undefined || value === null ? [] : [value as Json];

describe("blurhash, focal point and thread names, sent and received", () => {
  let pki: Pki;
  let fake: FakeRemote;
  let front: tls.Server;
  let server: TestServer;
  let app: FastifyInstance;
  let domain: string;
  let mastodon: FakeActor;
  let akkoma: FakeActor;
  let fans: FakeActor[];
  let alice: TestUser;
  let carol: TestUser;
  const loader = getDocumentLoader({ allowPrivateAddress: true });

  before(async () => {
    pki = makePki(["rookery.test", ...FAKE_HOSTS]);
    tls.setDefaultCACertificates([...tls.getCACertificates("default"), pki.caPem]);
    fake = await startFakeRemote(pki);
    let rookeryPort = 0;
    front = await tlsFront(pki, () => rookeryPort);
    domain = `rookery.test:${(front.address() as AddressInfo).port}`;
    server = await createTestServer({
      env: {
        LOCAL_DOMAIN: domain,
        LOCAL_HTTPS: "true",
        ALLOWED_PRIVATE_ADDRESSES: "127.0.0.1/32",
        OUTBOUND_HOSTS: ["rookery.test", ...FAKE_HOSTS].map((host) => `${host}=127.0.0.1`).join(","),
      },
    });
    app = server.app;
    await app.listen({ port: 0, host: "127.0.0.1" });
    rookeryPort = (app.server.address() as AddressInfo).port;
    await server.ctx.jobs.start({ concurrency: 4, pollInterval: 50 });
    installOutboundAgent(server.config);
    mastodon = await fake.addActor({ name: "mastodon", software: "mastodon", host: "mastodon.example" });
    akkoma = await fake.addActor({ name: "akkoma", software: "akkoma", host: "akkoma.example" });
    fans = await Promise.all(FANS.map((host, i) => fake.addActor({ name: `fan${i + 1}`, software: "mastodon", host })));
    alice = await createUser(server.ctx, "alice");
    carol = await createUser(server.ctx, "carol");
  });

  after(async () => {
    await server?.close();
    await new Promise((resolve) => front?.close(resolve));
    await fake?.close();
    if (pki) rmSync(pki.dir, { recursive: true, force: true });
  });

  // ---- Helpers ----

  const vars = (extra: Record<string, string> = {}) => ({
    mastodon: mastodon.origin,
    akkoma: akkoma.origin,
    rookeryDomain: domain,
    ...extra,
  });
  const mentionOf = (user: TestUser) => ({
    mentioned: user.account.uri,
    mentionedUrl: `${server.config.baseUrl}/@${user.username}`,
    mentionedName: user.username,
  });

  async function accepted(body: unknown, actor: FakeActor, path = "/inbox") {
    const res = await fake.deliver(server, path, body, { actor });
    assert.equal(res.status, 202, `${path} answered ${res.status}: ${res.body}`);
  }

  /** `actor` follows alice (her account is unlocked: Rookery accepts at once). */
  async function followAlice(actor: FakeActor) {
    const follow = activity("mastodon_follow", { mastodon: actor.origin, object: alice.account.uri });
    await accepted(follow, actor, "/users/alice/inbox");
    await eventually(
      () => fake.posted("Accept").some((p) => (p.json.object as Json)?.id === follow.id),
      `${actor.host}'s Follow accepted`,
    );
  }

  /** The activities of `type` about `objectId` that reached `host`, waited for. */
  async function received(type: string, objectId: string, host: string): Promise<Json> {
    let found: Json | undefined;
    await eventually(() => {
      found = fake.posted(type).find((p) => p.host === host && (p.json.object as Json)?.id === objectId)?.json;
      return found !== undefined;
    }, `a ${type} of ${objectId} at ${host}`);
    return found!;
  }

  async function statusRow(uri: string) {
    return server.ctx.db.kysely.selectFrom("statuses").selectAll().where("uri", "=", uri).executeTakeFirst();
  }

  /** The status stored for `uri`, as `viewer` (or anyone) reads it through the API. */
  async function statusOf(uri: string, viewer?: TestUser): Promise<Status> {
    await eventually(async () => (await statusRow(uri)) !== undefined, `${uri} to be stored`);
    const res = await request(app, "GET", `/api/v1/statuses/${(await statusRow(uri))!.id}`, { token: viewer?.token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Status;
  }

  async function conversationsOf(viewer: TestUser) {
    const res = await request(app, "GET", "/api/v1/conversations", { token: viewer.token });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Array<{ id: string; last_status: Status | null }>;
  }

  /** The term definitions of a document's `@context` (its inline objects merged). */
  const termsOf = (json: Json): Json =>
    Object.assign({}, ...asArray(json["@context"]).filter((entry) => typeof entry === "object"));

  function assertMediaTerms(document: Json, media: MediaAttachment, focalPoint: [number, number]) {
    assert.equal(document.type, "Document");
    assert.ok(media.blurhash, "the upload has a blurhash");
    assert.equal(document.blurhash, media.blurhash);
    assert.deepEqual(document.focalPoint, focalPoint);
    assert.equal(document.width, media.meta.original!.width);
    assert.equal(document.height, media.meta.original!.height);
  }

  function assertTermsDefined(json: Json) {
    const terms = termsOf(json);
    assert.equal(terms.blurhash, "toot:blurhash");
    assert.deepEqual(terms.focalPoint, { "@container": "@list", "@id": "toot:focalPoint" });
    assert.equal(terms.conversation, "ostatus:conversation");
    assert.equal(terms.toot, "http://joinmastodon.org/ns#");
    assert.equal(terms.ostatus, "http://ostatus.org#");
  }

  /** Whether the activity's object integrity proof and its Linked Data signature verify. */
  async function signaturesOf(json: Json): Promise<{ proof: boolean; ldSignature: boolean }> {
    const proofs = await verifyObject(Activity, detachSignature(json), {
      documentLoader: loader,
      contextLoader: loader,
    });
    const ldSignature = await verifyJsonLd(json, { documentLoader: loader, contextLoader: loader });
    return { proof: proofs !== null, ldSignature };
  }

  /** The copy of `json` whose first attachment's blurhash is another. */
  function withOtherBlurhash(json: Json): Json {
    const copy = structuredClone(json);
    asArray(copy.object.attachment)[0]!.blurhash = "LEHV6nWB2yk8pyo0adR*.7kCMdnj";
    return copy;
  }

  // ---- Sent ----

  describe("sent", () => {
    let media: MediaAttachment;
    let post: Status;
    let create: Json;

    test("a post's Create carries blurhash, focal point and size, and its thread's name, under proofs that cover them", async () => {
      await followAlice(mastodon);
      media = await uploadImage(server, alice, { width: 64, height: 48, focus: "0.5,-0.25", description: "teal" });
      post = await postStatus(server, alice, { status: "a teal square", media_ids: [media.id] });
      create = await received("Create", post.uri, "mastodon.example");

      const attachments = asArray(create.object.attachment);
      assert.equal(attachments.length, 1);
      assertMediaTerms(attachments[0]!, media, [0.5, -0.25]);
      assertTermsDefined(create);
      const thread = `${server.config.baseUrl}/contexts/${(await statusRow(post.uri))!.conversation_id}`;
      assert.equal(create.object.conversation, thread);
      assert.equal(create.object.context, thread);

      assert.equal(create.proof?.cryptosuite, "eddsa-jcs-2022");
      assert.equal(create.signature?.type, "RsaSignature2017");
      assert.deepEqual(await signaturesOf(create), { proof: true, ldSignature: true });
      assert.deepEqual(await signaturesOf(withOtherBlurhash(create)), { proof: false, ldSignature: false });
    });

    test("the Note at its id and the outbox carry the same", async () => {
      assert.ok(create, "the Create test ran");
      const res = await fetch(post.uri, { headers: AP });
      assert.equal(res.status, 200);
      const note = (await res.json()) as Json;
      assertTermsDefined(note);
      assertMediaTerms(asArray(note.attachment)[0]!, media, [0.5, -0.25]);
      assert.equal(note.conversation, create.object.conversation);
      assert.equal(note.context, create.object.context);

      const outbox = (await (await fetch(`${alice.account.uri}/outbox`, { headers: AP })).json()) as Json;
      const page = (await (await fetch(outbox.first, { headers: AP })).json()) as Json;
      const item = asArray(page.orderedItems).find((a) => a.object?.id === post.uri);
      assert.ok(item, "the post is in the outbox");
      assertTermsDefined(item);
      assertMediaTerms(asArray(item.object.attachment)[0]!, media, [0.5, -0.25]);
      assert.equal(item.object.conversation, create.object.conversation);
    });

    test("an edit's Update carries them too", async () => {
      assert.ok(create, "the Create test ran");
      const res = await request(app, "PUT", `/api/v1/statuses/${post.id}`, {
        token: alice.token,
        json: { status: "a teal square, edited", media_ids: [media.id] },
      });
      assert.equal(res.statusCode, 200, res.body);
      const update = await received("Update", post.uri, "mastodon.example");
      assertTermsDefined(update);
      assertMediaTerms(asArray(update.object.attachment)[0]!, media, [0.5, -0.25]);
      assert.equal(update.object.conversation, create.object.conversation);
      assert.deepEqual(await signaturesOf(update), { proof: true, ldSignature: true });
    });

    test("to five servers and more (Fedify's fan-out), every copy carries them under a proof that verifies", async () => {
      for (const fan of fans) await followAlice(fan);
      const picture = await uploadImage(server, alice, { width: 40, height: 30, focus: "-1,1" });
      const many = await postStatus(server, alice, { status: "to everyone", media_ids: [picture.id] });
      for (const host of ["mastodon.example", ...FANS]) {
        const copy = await received("Create", many.uri, host);
        assertMediaTerms(asArray(copy.object.attachment)[0]!, picture, [-1, 1]);
        assert.match(copy.object.conversation, /\/contexts\/\d+$/);
        assert.deepEqual(await signaturesOf(copy), { proof: true, ldSignature: true }, `the copy at ${host}`);
      }
    });

    test("a reply names its thread as the server the thread began on names it", async () => {
      const n = nextId();
      const toot = activity("mastodon_create_note", vars({ n, ...mentionOf(alice) }));
      await accepted(toot, mastodon);
      const tootCopy = await statusOf((toot.object as Json).id, alice);
      const mastodonReply = await postStatus(server, alice, {
        status: `@Gargron@mastodon.example:${fake.port} moves`,
        in_reply_to_id: tootCopy.id,
      });
      const sent = await received("Create", mastodonReply.uri, "mastodon.example");
      // An OStatus tag names the thread for Mastodon; it is no URL, so there is no `context`.
      assert.equal(sent.object.conversation, (toot.object as Json).conversation);
      assert.equal(sent.object.context, undefined);

      const context = nextId();
      const note = activity("akkoma_create_note", vars({ context, text: "a thread", blurhash: "", alt: "" }));
      await accepted(note, akkoma);
      const noteCopy = await statusOf((note.object as Json).id);
      const akkomaReply = await postStatus(server, alice, {
        status: `@lain@akkoma.example:${fake.port} in it`,
        in_reply_to_id: noteCopy.id,
      });
      const thread = `${akkoma.origin}/contexts/${context}`;
      const reply = await received("Create", akkomaReply.uri, "akkoma.example");
      assert.equal(reply.object.conversation, thread);
      assert.equal(reply.object.context, thread);
    });

    test("a thread's name that is no URI is not kept: a reply names the thread as one begun here", async () => {
      const toot = activity("mastodon_create_note", vars({ ...mentionOf(alice) }));
      (toot.object as Json).conversation = "https://exa mple/contexts/1";
      await accepted(toot, mastodon);
      const copy = await statusOf((toot.object as Json).id, alice);
      const reply = await postStatus(server, alice, {
        status: `@Gargron@mastodon.example:${fake.port} odd`,
        in_reply_to_id: copy.id,
      });
      const sent = await received("Create", reply.uri, "mastodon.example");
      const thread = `${server.config.baseUrl}/contexts/${(await statusRow((toot.object as Json).id))!.conversation_id}`;
      assert.equal(sent.object.conversation, thread);
      assert.equal(sent.object.context, thread);
    });
  });

  // ---- Received ----

  describe("received", () => {
    test("Mastodon's blurhash, focal point and size show in the API before the picture is kept", async () => {
      const n = nextId();
      const toot = activity("mastodon_create_note", vars({ n, ...mentionOf(alice) }));
      await accepted(toot, mastodon);
      const [media] = (await statusOf((toot.object as Json).id, alice)).media_attachments;
      assert.ok(media);
      assert.equal(media.remote_url, `https://files.mastodon.example/media_attachments/files/${n}/original/rook.png`);
      assert.equal(media.blurhash, MASTODON_BLURHASH);
      assert.deepEqual(media.meta.focus, { x: 0, y: -0.5 });
      assert.equal(media.meta.original?.width, 640);
      assert.equal(media.meta.original?.height, 480);
    });

    test("Akkoma's blurhash, which its context does not define, is read by name as Mastodon reads it", async () => {
      const note = activity(
        "akkoma_create_note",
        vars({ context: nextId(), text: "a photo", blurhash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj", alt: "the sea" }),
      );
      await accepted(note, akkoma);
      const [media] = (await statusOf((note.object as Json).id)).media_attachments;
      assert.equal(media?.description, "the sea");
      assert.equal(media?.blurhash, "LEHV6nWB2yk8pyo0adR*.7kCMdnj");
      assert.equal(media?.meta.focus, undefined);
    });

    test("what is no blurhash, or one of more than 5×5 components, and a focal point out of range are not kept", async () => {
      const pixels = new Uint8ClampedArray(8 * 8 * 4).fill(128);
      const cases: Array<[unknown, unknown]> = [
        ["not a blurhash!", [2, 0]],
        [encodeBlurhash(pixels, 8, 8, 6, 6), "0.5,0.5"],
        [MASTODON_BLURHASH.slice(0, -2), [0.5]],
      ];
      for (const [blurhash, focalPoint] of cases) {
        const toot = activity("mastodon_create_note", vars({ ...mentionOf(alice) }));
        const attachment = asArray((toot.object as Json).attachment)[0]!;
        attachment.blurhash = blurhash;
        attachment.focalPoint = focalPoint;
        await accepted(toot, mastodon);
        const [media] = (await statusOf((toot.object as Json).id, alice)).media_attachments;
        assert.equal(media?.blurhash, null, `blurhash ${String(blurhash)}`);
        assert.equal(media?.meta.focus, undefined, `focalPoint ${JSON.stringify(focalPoint)}`);
      }
    });

    test("a post fetched by its link (search) keeps them too", async () => {
      const toot = activity("mastodon_create_note", vars({ ...mentionOf(alice) }));
      const note: Json = { "@context": toot["@context"], ...(toot.object as Json) };
      fake.serve(note.id, note);
      const res = await request(app, "GET", `/api/v2/search?q=${encodeURIComponent(note.id)}&resolve=true`, {
        token: alice.token,
      });
      assert.equal(res.statusCode, 200, res.body);
      const [found] = (res.json() as { statuses: Status[] }).statuses;
      assert.equal(found?.uri, note.id);
      assert.equal(found?.media_attachments[0]?.blurhash, MASTODON_BLURHASH);
      assert.deepEqual(found?.media_attachments[0]?.meta.focus, { x: 0, y: -0.5 });
    });

    test("a reply whose parent this server lacks joins the conversation its thread's name points to", async () => {
      const context = nextId();
      const first = activity("akkoma_create_direct_reply", {
        ...vars({ context, text: "first", inReplyTo: `${akkoma.origin}/objects/never-seen-${nextId()}` }),
        ...mentionOf(carol),
      });
      await accepted(first, akkoma);
      await statusOf((first.object as Json).id, carol);
      const second = activity("akkoma_create_direct_reply", {
        ...vars({ context, text: "second", inReplyTo: `${akkoma.origin}/objects/gone-${nextId()}` }),
        ...mentionOf(carol),
      });
      await accepted(second, akkoma);
      const secondCopy = await statusOf((second.object as Json).id, carol);
      assert.equal(secondCopy.in_reply_to_id, null, "the parent is unknown (and cannot be fetched)");
      await eventually(
        async () => (await conversationsOf(carol)).some((c) => c.last_status?.id === secondCopy.id),
        "the second post in carol's conversations",
      );
      const conversations = await conversationsOf(carol);
      assert.equal(conversations.length, 1, "one conversation holds both posts");
      const [a, b] = await Promise.all([statusRow((first.object as Json).id), statusRow((second.object as Json).id)]);
      assert.equal(a!.conversation_id, b!.conversation_id);
    });

    test("so does a reply naming a thread begun here", async () => {
      const dm = await postStatus(server, alice, {
        status: `@Gargron@mastodon.example:${fake.port} a secret`,
        visibility: "direct",
      });
      const sent = await received("Create", dm.uri, "mastodon.example");
      const thread = sent.object.conversation as string;
      assert.match(thread, /\/contexts\/\d+$/);
      await eventually(async () => (await conversationsOf(alice)).length === 1, "alice's conversation");
      const reply = activity("mastodon_create_direct_reply", {
        ...vars({ conversation: thread, text: "safe with me", inReplyTo: `${mastodon.id}/statuses/${nextId()}` }),
        ...mentionOf(alice),
      });
      await accepted(reply, mastodon);
      const copy = await statusOf((reply.object as Json).id, alice);
      assert.equal(copy.in_reply_to_id, null, "the parent is unknown (and cannot be fetched)");
      await eventually(
        async () => (await conversationsOf(alice)).some((c) => c.last_status?.id === copy.id),
        "the reply in alice's conversations",
      );
      assert.equal((await conversationsOf(alice)).length, 1, "the reply joined alice's conversation");
    });
  });
});
