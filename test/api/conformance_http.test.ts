/**
 * Request conventions real clients rely on: browser forms with empty file inputs, IDs sent as bare
 * JSON numbers beyond 2^53, authorized-fetch mode for the client API, and app registration limits.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import sharp from "sharp";
import {
  appToken,
  createTestServer,
  errorOf,
  get,
  multipartBody,
  request,
  standardAccounts,
  type StandardAccounts,
  type TestServer,
} from "../kit.ts";

const UPDATE = "/api/v1/accounts/update_credentials";
const MISSING_AVATAR = "https://rookery.test/avatars/original/missing.png";
const MISSING_HEADER = "https://rookery.test/headers/original/missing.png";
const AUTHENTICATION_REQUIRED = "This API requires an authenticated user";
const FILE_MISSING = "param is missing or the value is empty or invalid: file";

type Part = Parameters<typeof multipartBody>[0][number];

const emptyFile = (name: string): Part => ({ name, value: "", filename: "", type: "application/octet-stream" });

async function pngImage(): Promise<Buffer> {
  return sharp({ create: { width: 8, height: 8, channels: 3, background: { r: 200, g: 20, b: 20 } } })
    .png()
    .toBuffer();
}

describe("multipart file parts with an empty filename", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const send = (method: "PATCH" | "POST", url: string, token: string, parts: Part[]) =>
    request(server.app, method, url, { token, parts });

  test("a profile form saved without new pictures keeps the name and bio", async () => {
    const res = await send("PATCH", UPDATE, a.alice.token, [
      { name: "display_name", value: "Alice Form" },
      { name: "note", value: "Saved from the browser" },
      emptyFile("avatar"),
      emptyFile("header"),
    ]);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.equal(body.display_name, "Alice Form");
    assert.equal(body.source.note, "Saved from the browser");
    assert.equal(body.avatar, MISSING_AVATAR);
    assert.equal(body.header, MISSING_HEADER);
  });

  test("an empty file part leaves an existing avatar in place", async () => {
    const picture: Part = { name: "avatar", value: await pngImage(), filename: "me.png", type: "image/png" };
    const first = await send("PATCH", UPDATE, a.bob.token, [picture]);
    assert.equal(first.statusCode, 200, first.body);
    const avatar = first.json().avatar as string;
    assert.notEqual(avatar, MISSING_AVATAR);
    const again = await send("PATCH", UPDATE, a.bob.token, [
      { name: "display_name", value: "Bob" },
      emptyFile("avatar"),
    ]);
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(again.json().avatar, avatar);
    assert.equal(again.json().display_name, "Bob");
  });

  test("a media upload whose file input was left empty is a missing file", async () => {
    const parts = [emptyFile("file"), { name: "description", value: "nothing" }];
    const res = await send("POST", "/api/v2/media", a.carol.token, parts);
    assert.deepEqual(errorOf(res), [400, FILE_MISSING]);
  });
});

describe("integers beyond 2^53 in JSON bodies", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  /** Posts a JSON text as written (IDs spliced in as bare numbers). */
  const postRaw = (token: string, url: string, text: string) =>
    request(server.app, "POST", url, { token, body: text, headers: { "content-type": "application/json" } });

  const createStatus = async (status: string): Promise<string> => {
    const res = await request(server.app, "POST", "/api/v1/statuses", { token: a.alice.token, json: { status } });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().id as string;
  };

  test("status IDs are beyond 2^53 (the premise of these tests)", async () => {
    const id = await createStatus("premise");
    assert.ok(BigInt(id) > BigInt(Number.MAX_SAFE_INTEGER), id);
  });

  test("a reply with in_reply_to_id as a bare JSON number", async () => {
    const parent = await createStatus("parent");
    const text = `{"status":"@alice a reply","in_reply_to_id":${parent}}`;
    const res = await postRaw(a.bob.token, "/api/v1/statuses", text);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().in_reply_to_id, parent);
  });

  test("a reply with a poll and a numeric in_reply_to_id", async () => {
    const parent = await createStatus("poll parent");
    const poll = `{"options":["a","b"],"expires_in":3600,"multiple":0}`;
    const text = `{"status":"which?","in_reply_to_id":${parent},"poll":${poll}}`;
    const res = await postRaw(a.bob.token, "/api/v1/statuses", text);
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().in_reply_to_id, parent);
    assert.equal(res.json().poll.multiple, false);
    assert.deepEqual(
      res.json().poll.options.map((o: { title: string }) => o.title),
      ["a", "b"],
    );
  });

  test("media_ids as bare JSON numbers", async () => {
    const upload = multipartBody([{ name: "file", value: await pngImage(), filename: "a.png", type: "image/png" }]);
    const media = await request(server.app, "POST", "/api/v2/media", {
      token: a.carol.token,
      body: upload.body,
      headers: { "content-type": upload.contentType },
    });
    assert.ok(media.statusCode === 200 || media.statusCode === 202, media.body);
    const mediaId = media.json().id as string;
    const res = await postRaw(a.carol.token, "/api/v1/statuses", `{"status":"a picture","media_ids":[${mediaId}]}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual(
      res.json().media_attachments.map((m: { id: string }) => m.id),
      [mediaId],
    );
  });

  test("negative and small integers, fractions and exponents keep their JSON meaning", async () => {
    const { parseJsonKeepingBigIntegers } = await import("../../src/api/body.ts");
    const parsed = parseJsonKeepingBigIntegers(
      '{"big":117668027173577827,"neg":-117668027173577827,"max":9007199254740991,"small":1,' +
        '"frac":117668027173577827.5,"exp":1.2e30,"text":"117668027173577827","esc":"\\"9007199254740993\\"",' +
        '"list":[0,9007199254740993,true]}',
    );
    assert.deepEqual(parsed, {
      big: "117668027173577827",
      neg: "-117668027173577827",
      max: 9007199254740991,
      small: 1,
      frac: Number("117668027173577827.5"),
      exp: 1.2e30,
      text: "117668027173577827",
      esc: '"9007199254740993"',
      list: [0, "9007199254740993", true],
    });
  });
});

for (const env of [{ AUTHORIZED_FETCH: "true" }, { SECURE_MODE: "true" }] as Array<Record<string, string>>) {
  describe(`the client API with ${Object.keys(env)[0]}=true`, () => {
    let server: TestServer;
    let a: StandardAccounts;
    let paths: string[];
    before(async () => {
      server = await createTestServer({ env });
      a = await standardAccounts(server.ctx);
      const poll = { options: ["yes", "no"], expires_in: 3600 };
      const json = { status: "open poll", poll };
      const res = await request(server.app, "POST", "/api/v1/statuses", { token: a.alice.token, json });
      assert.equal(res.statusCode, 200, res.body);
      const status = res.json();
      paths = [
        `/api/v1/accounts/${a.bob.account.id}`,
        `/api/v1/accounts?id[]=${a.bob.account.id}`,
        "/api/v1/accounts/lookup?acct=bob",
        `/api/v1/statuses/${status.id}`,
        `/api/v1/statuses?id[]=${status.id}`,
        `/api/v1/statuses/${status.id}/context`,
        `/api/v1/statuses/${status.id}/reblogged_by`,
        `/api/v1/statuses/${status.id}/favourited_by`,
        `/api/v1/polls/${status.poll.id}`,
        "/api/v1/timelines/public",
      ];
    });
    after(() => server.close());

    test("public endpoints answer 401 to anonymous callers and to app tokens", async () => {
      const app = await appToken(server.ctx, "read");
      for (const path of paths) {
        assert.deepEqual(errorOf(await get(server.app, path)), [401, AUTHENTICATION_REQUIRED], path);
        assert.deepEqual(errorOf(await get(server.app, path, app)), [401, AUTHENTICATION_REQUIRED], path);
      }
    });

    test("a user token reads them", async () => {
      for (const path of paths) {
        const res = await get(server.app, path, a.carol.token);
        assert.equal(res.statusCode, 200, `${path}: ${res.body}`);
      }
    });

    test("instance metadata, custom emojis and app registration stay public, as in Mastodon", async () => {
      for (const path of ["/api/v1/instance", "/api/v2/instance", "/api/v1/custom_emojis", "/api/v1/instance/rules"]) {
        assert.equal((await get(server.app, path)).statusCode, 200, path);
      }
      const form = { client_name: "Anonymous client", redirect_uris: "https://client.example/cb" };
      assert.equal((await request(server.app, "POST", "/api/v1/apps", { form })).statusCode, 200);
    });

    test("sign-up still takes an app token", async () => {
      const app = await appToken(server.ctx, "write:accounts");
      const form = {
        username: "newcomer",
        email: "newcomer@rookery.test",
        password: "correct horse battery staple",
        agreement: "true",
        locale: "en",
      };
      const res = await request(server.app, "POST", "/api/v1/accounts", { token: app, form });
      assert.equal(res.statusCode, 200, res.body);
    });
  });
}

describe("app registration limits", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  const register = (form: Record<string, string | string[]>) => request(server.app, "POST", "/api/v1/apps", { form });
  const registerUris = (redirectUris: string) => register({ client_name: "Limits", redirect_uris: redirectUris });
  const registerNamed = (name: string) => register({ client_name: name, redirect_uris: "https://x.example/cb" });

  const FORBIDDEN = "Validation failed: Redirect URI is forbidden by the server.";
  const NO_SCHEME = "Validation failed: Redirect URI must specify a scheme.";
  const INVALID = "Validation failed: Redirect URI must be a valid URI.";
  const RELATIVE = "Validation failed: Redirect URI must be an absolute URI.";
  const FRAGMENT = "Validation failed: Redirect URI cannot contain a fragment.";
  const URI_TOO_LONG = "Validation failed: Redirect URI is too long (maximum is 2000 characters)";
  const WEBSITE_TOO_LONG = "Validation failed: Website is too long (maximum is 2000 characters)";
  const NAME_TOO_LONG = "Validation failed: Name is too long (maximum is 60 characters)";

  test("file:, javascript:, data: and vbscript: redirect URIs are forbidden", async () => {
    const uris = [
      "file:///etc/passwd",
      "FILE:///c:/x",
      "javascript:alert(1)",
      "data:text/html,hi",
      "vbscript:msgbox",
      "JavaScript://x/%0aalert(1)",
    ];
    for (const uri of uris) {
      assert.deepEqual(errorOf(await registerUris(uri)), [422, FORBIDDEN], uri);
    }
  });

  test("opaque URIs and a forgotten scheme are refused", async () => {
    for (const uri of ["myapp:callback", "localhost:3000/callback", "localhost://cb", "mailto:someone@example.com"]) {
      assert.deepEqual(errorOf(await registerUris(uri)), [422, NO_SCHEME], uri);
    }
  });

  test("http(s) URIs need a host, and no URI may hold characters a URI cannot", async () => {
    const uris = ["https:/callback", "http:callback", "https://"];
    uris.push("https://x.example/é", "https://x.example/<cb>", "https://a/b#c#d");
    for (const uri of uris) {
      assert.equal(errorOf(await registerUris(uri))[0], 422, uri);
    }
    assert.deepEqual(errorOf(await registerUris("https:/callback")), [422, INVALID]);
    assert.deepEqual(errorOf(await registerUris("https://")), [422, INVALID]);
    assert.deepEqual(errorOf(await registerUris("https://x.example/é")), [422, INVALID]);
    assert.deepEqual(errorOf(await registerUris("https://x.example/<cb>")), [422, INVALID]);
    assert.deepEqual(errorOf(await registerUris("http:callback")), [422, NO_SCHEME]);
  });

  test("relative URIs and fragments are refused", async () => {
    assert.deepEqual(errorOf(await registerUris("//x.example/cb")), [422, RELATIVE]);
    assert.deepEqual(errorOf(await registerUris("cb?x=1")), [422, RELATIVE]);
    assert.deepEqual(errorOf(await registerUris("myapp://cb#x")), [422, FRAGMENT]);
    assert.deepEqual(errorOf(await registerUris("https://x.example/cb#")), [422, FRAGMENT]);
  });

  test("the out-of-band URN, http(s) and custom app schemes are accepted", async () => {
    const uris = [
      "urn:ietf:wg:oauth:2.0:oob",
      "http://localhost:4000/callback",
      "https://client.example/oauth?x=1",
      "ivory://callback",
      "com.example.app:/oauth2redirect",
      "org.joinmastodon.android.pub://callback",
      "myapp:",
    ];
    for (const uri of uris) {
      const res = await registerUris(uri);
      assert.equal(res.statusCode, 200, `${uri}: ${res.body}`);
      assert.deepEqual(res.json().redirect_uris, [uri]);
    }
  });

  test("the redirect URIs together may hold 2000 characters, the website 2000, the name 60", async () => {
    const uri = (length: number) => `https://x.example/${"a".repeat(length - "https://x.example/".length)}`;
    assert.equal((await registerUris(uri(2000))).statusCode, 200);
    assert.deepEqual(errorOf(await registerUris(uri(2001))), [422, URI_TOO_LONG]);
    // Two URIs of 1000 characters and the line between them: 2001.
    const two = (second: number) => register({ client_name: "Two", "redirect_uris[]": [uri(1000), uri(second)] });
    assert.deepEqual(errorOf(await two(1000)), [422, URI_TOO_LONG]);
    assert.equal((await two(999)).statusCode, 200);
    const many = Array.from({ length: 500 }, (_, i) => `https://app.example/${i}/callback`);
    assert.deepEqual(errorOf(await register({ client_name: "Many", "redirect_uris[]": many })), [422, URI_TOO_LONG]);
    const site = { client_name: "Site", redirect_uris: "https://x.example/cb" };
    assert.equal((await register({ ...site, website: uri(2000) })).statusCode, 200);
    assert.deepEqual(errorOf(await register({ ...site, website: uri(2001) })), [422, WEBSITE_TOO_LONG]);
    const named = (length: number) => registerNamed("é".repeat(length));
    assert.equal((await named(60)).statusCode, 200);
    assert.deepEqual(errorOf(await named(61)), [422, NAME_TOO_LONG]);
  });

  test("every problem is listed, in Mastodon's order", async () => {
    const form = { client_name: "n".repeat(61), redirect_uris: "file:///x", scopes: "read bogus", website: "ftp://x" };
    const res = await register(form);
    const expected =
      "Validation failed: Redirect URI is forbidden by the server., Scopes doesn't match configured on the server., " +
      "Name is too long (maximum is 60 characters), Website is not a valid URL";
    assert.deepEqual(errorOf(res), [422, expected]);
  });
});
