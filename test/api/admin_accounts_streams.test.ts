/**
 * Admin account actions take effect on open streams at once: suspending or disabling a user
 * through the admin API closes their streaming connections (the `access.changed` event).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createTestServer, createUser, request, tokenFor, type TestServer } from "../kit.ts";
import { listen, WsClient } from "../streaming_clients.ts";

describe("admin account actions and open streams", () => {
  let server: TestServer;
  let host: string;
  let adminToken: string;
  const clients: WsClient[] = [];
  before(async () => {
    server = await createTestServer();
    host = await listen(server);
    server.ctx.jobs.start();
    const admin = await createUser(server.ctx, "streamboss", { role: "Admin" });
    adminToken = await tokenFor(server.ctx, admin, "admin:write:accounts");
  });
  after(async () => {
    for (const c of clients) c.close();
    await server.close();
  });

  for (const type of ["suspend", "disable"])
    test(`${type} closes the user's open streams`, async () => {
      const target = await createUser(server.ctx, `streamed${type}`);
      const client = await WsClient.connect(host, target.token);
      clients.push(client);
      client.subscribe("user");
      client.send({ type: "unsubscribe", stream: "round-trip" });
      await client.frames.next((f) => f.error === "Unknown stream type", 2000, "the round trip");
      const res = await request(server.app, "POST", `/api/v1/admin/accounts/${target.account.id}/action`, {
        token: adminToken,
        form: { type, send_email_notification: "false" },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(typeof (await client.closed), "number");
    });
});
