/**
 * Admin canonical e-mail blocks: every endpoint and its errors (403 without a token, outside the
 * scopes, without Manage Blocks; 404; 422 for a missing, malformed or repeated hash; 400 for `test`
 * without an address), Mastodon's canonical form (lowercase, no dots and no `+suffix` before the
 * `@`, for every domain) and its SHA-256, `test`, Link paging, the audit log, and what a block
 * does: sign-ups with any spelling of the address are refused as `taken`.
 */
import { describeAdminAccess } from "../admin_access.ts";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { newId } from "../../src/db/ids.ts";
import {
  appToken,
  createTestServer,
  createUser,
  errorOf,
  request,
  tokenFor,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";

interface Block {
  id: string;
  canonical_email_hash: string;
}

const NOT_FOUND = "Record not found";
const BLOCKS = "/api/v1/admin/canonical_email_blocks";
const TEST = `${BLOCKS}/test`;
type Method = "GET" | "POST" | "DELETE";
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("admin canonical e-mail blocks", () => {
  let server: TestServer;
  let admin: TestUser;
  let token: string;
  before(async () => {
    server = await createTestServer();
    admin = await createUser(server.ctx, "canonadmin", { role: "Admin" });
    token = await tokenFor(server.ctx, admin, "admin:read:canonical_email_blocks admin:write:canonical_email_blocks");
  });
  after(() => server.close());

  const call = (method: Method, path: string, t: string | undefined, json?: object) =>
    request(server.app, method, path, { token: t, json });
  let serial = 0;
  const address = () => `someone${++serial}@example.com`;

  async function block(json: object): Promise<Block> {
    const res = await call("POST", BLOCKS, token, json);
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Block;
  }

  test("POST with an e-mail stores the hash of its canonical form; GET, list, test, DELETE; the log has it", async () => {
    const created = await block({ email: "First.Last+news@Example.COM" });
    assert.deepEqual(Object.keys(created).sort(), ["canonical_email_hash", "id"]);
    assert.equal(created.canonical_email_hash, sha256("firstlast@example.com"));
    assert.deepEqual((await call("GET", `${BLOCKS}/${created.id}`, token)).json(), created);
    assert.ok(((await call("GET", BLOCKS, token)).json() as Block[]).some((b) => b.id === created.id));

    for (const spelling of ["firstlast@example.com", "f.i.r.s.t.l.a.s.t+x+y@EXAMPLE.com", "FirstLast+@example.com"])
      assert.deepEqual((await call("POST", TEST, token, { email: spelling })).json(), [created], spelling);
    for (const other of ["firstlast@example.org", "first_last@example.com", "firstlas@example.com"])
      assert.deepEqual((await call("POST", TEST, token, { email: other })).json(), [], other);

    const removed = await call("DELETE", `${BLOCKS}/${created.id}`, token);
    assert.deepEqual([removed.statusCode, removed.json()], [200, {}]);
    assert.deepEqual(errorOf(await call("GET", `${BLOCKS}/${created.id}`, token)), [404, NOT_FOUND]);
    assert.deepEqual(errorOf(await call("DELETE", `${BLOCKS}/${created.id}`, token)), [404, NOT_FOUND]);
    assert.deepEqual((await call("POST", TEST, token, { email: "firstlast@example.com" })).json(), []);

    const log = await server.ctx.db.kysely
      .selectFrom("admin_action_logs")
      .select(["account_id", "action", "target_type", "human_identifier"])
      .where("target_id", "=", created.id)
      .orderBy("id")
      .execute();
    const entry = (action: string) => ({
      account_id: admin.account.id,
      action,
      target_type: "CanonicalEmailBlock",
      human_identifier: created.canonical_email_hash,
    });
    assert.deepEqual(log, [entry("create"), entry("destroy")]);
  });

  test("POST with a hash stores it (lowercased); the e-mail wins when both are sent", async () => {
    const hash = sha256("hashonly@example.com");
    assert.equal((await block({ canonical_email_hash: hash.toUpperCase() })).canonical_email_hash, hash);
    const both = await block({ email: "both@example.com", canonical_email_hash: sha256("other@example.com") });
    assert.equal(both.canonical_email_hash, sha256("both@example.com"));
  });

  test("422 for nothing to block, a malformed hash, and an address blocked already; 400 for test without one", async () => {
    for (const json of [{}, { email: "" }, { canonical_email_hash: " " }, { email: null }])
      assert.deepEqual(
        errorOf(await call("POST", BLOCKS, token, json)),
        [422, "Validation failed: Canonical email hash can't be blank"],
        JSON.stringify(json),
      );
    for (const bad of ["abc", "z".repeat(64), sha256("x").slice(1)])
      assert.deepEqual(errorOf(await call("POST", BLOCKS, token, { canonical_email_hash: bad })), [
        422,
        "Validation failed: Canonical email hash is invalid",
      ]);
    const email = address();
    await block({ email });
    assert.deepEqual(errorOf(await call("POST", BLOCKS, token, { email: email.toUpperCase() })), [
      422,
      "Validation failed: Canonical email hash has already been taken",
    ]);
    for (const json of [{}, { email: "" }, { email: ["a@b.example"] }])
      assert.deepEqual(errorOf(await call("POST", TEST, token, json)), [
        400,
        "param is missing or the value is empty or invalid: email",
      ]);
  });

  test("unknown IDs, words and IDs beyond 64 bits: 404; IDs are strings; form parameters work", async () => {
    for (const id of [newId(), "abc", "9223372036854775808"]) {
      assert.deepEqual(errorOf(await call("GET", `${BLOCKS}/${id}`, token)), [404, NOT_FOUND], id);
      assert.deepEqual(errorOf(await call("DELETE", `${BLOCKS}/${id}`, token)), [404, NOT_FOUND], id);
    }
    const res = await request(server.app, "POST", BLOCKS, { token, form: { email: address() } });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(res.body, /"id":"\d+"/);
  });

  test("a blocked address cannot sign up under any spelling: its e-mail is `taken`", async () => {
    await block({ email: "evader@example.net" });
    const signUp = async (username: string, email: string) =>
      request(server.app, "POST", "/api/v1/accounts", {
        token: await appToken(server.ctx),
        json: { username, email, password: "a fine passphrase", agreement: true },
      });
    for (const [username, email] of [
      ["evader1", "evader@example.net"],
      ["evader2", "E.vader+again@Example.NET"],
    ]) {
      const res = await signUp(username!, email!);
      assert.equal(res.statusCode, 422, res.body);
      assert.deepEqual(res.json().details.email, [{ error: "ERR_TAKEN", description: "has already been taken" }]);
    }
    assert.equal((await signUp("evader3", "evader@example.org")).statusCode, 200);
  });

  test("pages of 100 by default and at most 200, newest first, with a Link header", async () => {
    const fresh = await createTestServer();
    try {
      const user = await createUser(fresh.ctx, "canonpager", { role: "Admin" });
      const t = await tokenFor(fresh.ctx, user, "admin:read:canonical_email_blocks");
      const now = new Date().toISOString();
      const rows = Array.from({ length: 205 }, (_, i) => ({
        id: newId(),
        canonical_email_hash: sha256(`p${i}@example.com`),
        created_at: now,
        updated_at: now,
      }));
      await fresh.ctx.db.kysely.insertInto("canonical_email_blocks").values(rows).execute();
      const page = (q: string) => request(fresh.app, "GET", `${BLOCKS}${q}`, { token: t });
      assert.equal(((await page("")).json() as Block[]).length, 100);
      assert.equal(((await page("?limit=500")).json() as Block[]).length, 200);
      const first = await page("?limit=2");
      assert.deepEqual(
        (first.json() as Block[]).map((b) => b.id),
        [rows[204]!.id, rows[203]!.id],
      );
      const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))?.[1];
      assert.ok(next);
      assert.deepEqual(
        ((await page(new URL(next).search)).json() as Block[]).map((b) => b.id),
        [rows[202]!.id, rows[201]!.id],
      );
    } finally {
      await fresh.close();
    }
  });

  describeAdminAccess<Method>({
    server: () => server,
    admin: () => admin,
    subject: "canonical_email_blocks",
    otherSubject: "ip_blocks",
    permission: "Manage Blocks",
    prefix: "canon",
    call,
    // `test` reads, so it takes the read scope like the GETs (as in Mastodon).
    reads: (method, path) => method === "GET" || path === TEST,
    routes: async () => {
      const target = await block({ email: address() });
      return [
        ["GET", BLOCKS],
        ["GET", `${BLOCKS}/${target.id}`],
        ["POST", TEST, { email: "x@example.com" }],
        ["POST", BLOCKS, { email: address() }],
        ["DELETE", `${BLOCKS}/${target.id}`],
      ];
    },
  });

  test("Admin::CanonicalEmailBlock matches Mastodon's OpenAPI schema", { skip: openApiSkip }, async () => {
    const created = await block({ email: address() });
    assert.deepEqual(validateSchema("AdminCanonicalEmailBlock", created), []);
  });
});
