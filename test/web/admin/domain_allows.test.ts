/**
 * The admin area's domain allows: who may open them (Manage Federation: an Admin, not a
 * Moderator), the line that says whether limited federation mode is on, allowing and taking off a
 * domain through the forms — seen by the admin API, recorded in the audit log —, 422 pages for a
 * blank or invalid domain and for forms without their CSRF token, 404 pages for unknown allows,
 * and, in limited federation mode, that taking a domain off cuts its accounts.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { alertOf, findForm, type Browser } from "../../browser.ts";
import { createRemoteAccount, createTestServer, request, tokenFor, type TestServer, type TestUser } from "../../kit.ts";
import { describeStaffOnly, EXPIRED, staffBrowser } from "./kit.ts";

interface Allow {
  id: string;
  domain: string;
}

const LIST = "/admin/domain_allows";
const OFF = /Limited federation mode \(LIMITED_FEDERATION_MODE\) is off/;
const ON = /This server runs in limited federation mode \(LIMITED_FEDERATION_MODE\)/;

describe("admin: domain allows", () => {
  let server: TestServer;
  let admin: TestUser;
  let browser: Browser;
  let token: string;
  before(async () => {
    server = await createTestServer();
    ({ user: admin, browser } = await staffBrowser(server, "Admin"));
    token = await tokenFor(server.ctx, admin, "admin:read:domain_allows admin:write:domain_allows");
  });
  after(() => server.close());

  const apiList = async () =>
    (await request(server.app, "GET", "/api/v1/admin/domain_allows?limit=200", { token })).json() as Allow[];
  const apiCreate = async (domain: string) => {
    const res = await request(server.app, "POST", "/api/v1/admin/domain_allows", { token, json: { domain } });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Allow;
  };
  const logOf = (targetId: string) =>
    server.ctx.db.kysely
      .selectFrom("admin_action_logs")
      .select(["account_id", "action", "target_type", "human_identifier"])
      .where("target_id", "=", targetId)
      .orderBy("id")
      .execute();

  describeStaffOnly({ server: () => server, pages: [LIST, `${LIST}/new`], allowed: "Admin", refused: "Moderator" });

  test("outside limited federation mode, the pages say the list has no effect", async () => {
    assert.match((await browser.get(LIST)).body, OFF);
    assert.match((await browser.get(`${LIST}/new`)).body, OFF);
  });

  test("allowing a domain through the form: the API shows it, the audit log records it", async () => {
    const res = await browser.submit(await browser.get(`${LIST}/new`), LIST, { domain: " Friends.Example " });
    assert.equal(res.statusCode, 303, res.body);
    assert.equal(res.headers.location, `${LIST}?notice=created`);
    const list = await browser.follow(res);
    assert.match(list.body, /The domain is allowed\./);
    assert.match(list.body, /<td>friends\.example<\/td>/);
    const allow = (await apiList()).find((a) => a.domain === "friends.example");
    assert.ok(allow);
    assert.deepEqual(await logOf(allow.id), [
      {
        account_id: admin.account.id,
        action: "create",
        target_type: "DomainAllow",
        human_identifier: "friends.example",
      },
    ]);

    // Allowing it again is no error, and no second allow.
    const again = await browser.submit(await browser.get(`${LIST}/new`), LIST, { domain: "friends.example" });
    assert.equal(again.statusCode, 303);
    assert.equal((await apiList()).filter((a) => a.domain === "friends.example").length, 1);
  });

  test("taking a domain off: gone from the API, the audit log records it", async () => {
    const allow = await apiCreate("leaving.example");
    const res = await browser.submit(await browser.get(LIST), `${LIST}/${allow.id}/remove`);
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, `${LIST}?notice=removed`);
    assert.match((await browser.follow(res)).body, /The domain is no longer allowed\./);
    assert.equal(
      (await apiList()).find((a) => a.id === allow.id),
      undefined,
    );
    assert.deepEqual(
      (await logOf(allow.id)).map((l) => l.action),
      ["create", "destroy"],
    );
  });

  test("a blank or invalid domain: 422 with the form, nothing allowed", async () => {
    const before = (await apiList()).length;
    for (const [domain, alert] of [
      ["", "Validation failed: Domain can't be blank"],
      ["<script>x</script>", "Validation failed: Domain is not a valid domain name"],
    ]) {
      const res = await browser.submit(await browser.get(`${LIST}/new`), LIST, { domain });
      assert.equal(res.statusCode, 422);
      assert.equal(alertOf(res.body), alert);
      assert.doesNotMatch(res.body, /<script>x/);
      assert.equal(findForm(res.body, LIST).fields.domain, domain);
    }
    assert.equal((await apiList()).length, before);
  });

  test("forms without their CSRF token: 422, nothing changed", async () => {
    const created = await browser.submit(await browser.get(`${LIST}/new`), LIST, { domain: "sneaky.example" }, [
      "authenticity_token",
    ]);
    assert.equal(created.statusCode, 422);
    assert.equal(alertOf(created.body), EXPIRED);
    assert.equal(
      (await apiList()).find((a) => a.domain === "sneaky.example"),
      undefined,
    );

    const allow = await apiCreate("kept.example");
    const removed = await browser.submit(await browser.get(LIST), `${LIST}/${allow.id}/remove`, {}, [
      "authenticity_token",
    ]);
    assert.equal(removed.statusCode, 422);
    assert.ok((await apiList()).find((a) => a.id === allow.id));
  });

  test("unknown allows: 404 pages", async () => {
    const token = findForm((await browser.get(`${LIST}/new`)).body, LIST).fields.authenticity_token;
    for (const id of ["999999999999", "nope"]) {
      const res = await browser.post(`${LIST}/${id}/remove`, { authenticity_token: token });
      assert.equal(res.statusCode, 404);
      assert.equal(alertOf(res.body), "Record not found");
    }
  });
});

describe("admin: domain allows in limited federation mode", () => {
  let server: TestServer;
  let browser: Browser;
  let token: string;
  before(async () => {
    server = await createTestServer({ env: { LIMITED_FEDERATION_MODE: "true" } });
    let admin: TestUser;
    ({ user: admin, browser } = await staffBrowser(server, "Admin"));
    token = await tokenFor(server.ctx, admin, "admin:read:domain_allows admin:write:domain_allows");
  });
  after(() => server.close());

  test("the page says the list is in force; taking a domain off suspends its accounts", async () => {
    const res = await request(server.app, "POST", "/api/v1/admin/domain_allows", {
      token,
      json: { domain: "partner.example" },
    });
    const allow = res.json() as Allow;
    const remote = await createRemoteAccount(server.ctx, "pal", "partner.example");
    const list = await browser.get(LIST);
    assert.match(list.body, ON);
    assert.match(list.body, /Taking a domain off the list removes its accounts/);
    assert.match(list.body, /Stop federating with partner\.example/);

    const removed = await browser.submit(list, `${LIST}/${allow.id}/remove`);
    assert.equal(removed.statusCode, 303);
    const account = await server.ctx.db.kysely
      .selectFrom("accounts")
      .select("suspended_at")
      .where("id", "=", remote.id)
      .executeTakeFirstOrThrow();
    assert.ok(account.suspended_at);
  });
});
