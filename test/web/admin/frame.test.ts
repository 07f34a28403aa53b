import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { Browser } from "../../browser.ts";
import { createTestServer, type TestServer } from "../../kit.ts";
import { staffBrowser } from "./kit.ts";

describe("the admin area's entrance", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  test("not signed in: /admin sends the browser to sign in", async () => {
    const res = await new Browser(server.app).get("/admin");
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, "/auth/sign_in?return_to=%2Fadmin");
  });

  test("a plain user gets a 403 page", async () => {
    const { browser } = await staffBrowser(server, undefined);
    const res = await browser.get("/admin");
    assert.equal(res.statusCode, 403);
    assert.match(res.body, /You are not allowed to open this page\./);
  });

  test("a moderator is sent to the reports, the first section a Moderator may open", async () => {
    const { browser } = await staffBrowser(server, "Moderator");
    const res = await browser.get("/admin");
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, "/admin/reports");
  });

  test("the settings show staff the way in; others do not see it", async () => {
    const staff = await staffBrowser(server, "Moderator");
    assert.match((await staff.browser.get("/settings")).body, /href="\/admin"/);
    const plain = await staffBrowser(server, undefined);
    assert.doesNotMatch((await plain.browser.get("/settings")).body, /href="\/admin"/);
  });
});
