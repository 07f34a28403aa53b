/**
 * `rookery domain-allows list|add|remove`: the allow-list of limited federation mode from the
 * shell. The domain is stored as the API stores it; a note on stderr says when the list has no
 * effect; in limited mode `remove` suspends the domain's accounts and queues the job that removes
 * their posts and follows.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { COMMANDS } from "../src/cli/main.ts";
import { cli } from "./cli_run.ts";
import { newId } from "../src/db/ids.ts";
import { createRemoteAccount, createTestServer, type TestServer } from "./kit.ts";

const MODE_OFF = "Note: LIMITED_FEDERATION_MODE is not true, so the allow-list has no effect until it is.";

const allowed = async (server: TestServer) =>
  (await server.ctx.db.kysely.selectFrom("domain_allows").select("domain").orderBy("domain").execute()).map(
    (r) => r.domain,
  );

describe("rookery domain-allows", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  test("add stores the domain normalized; adding it again says so; both note that the mode is off", async () => {
    const added = await cli(server, "domain-allows", "add", "Bücher.Example.:8443");
    assert.deepEqual([added.code, added.out, added.err], [0, ["Allowed xn--bcher-kva.example"], [MODE_OFF]]);
    const again = await cli(server, "domain-allows", "add", "XN--BCHER-KVA.example");
    assert.deepEqual([again.code, again.out, again.err], [0, ["xn--bcher-kva.example is already allowed"], [MODE_OFF]]);
    assert.deepEqual(await allowed(server), ["xn--bcher-kva.example"]);
  });

  test("add and remove refuse what is not a domain name, with the usage", async () => {
    for (const verb of ["add", "remove"]) {
      const result = await cli(server, "domain-allows", verb, "not a domain");
      assert.equal(result.code, 1, verb);
      assert.match(result.err.join("\n"), /^rookery domain-allows \w+: "not a domain" is not a domain name\n\nUsage: /);
    }
    assert.ok(!(await allowed(server)).includes("not a domain"));
  });

  test("list prints one domain a line, sorted, or the API's entities with --json", async () => {
    await cli(server, "domain-allows", "add", "zeta.example");
    await cli(server, "domain-allows", "add", "alpha.example");
    const text = await cli(server, "domain-allows", "list");
    assert.deepEqual(
      [text.code, text.out, text.err],
      [0, ["alpha.example", "xn--bcher-kva.example", "zeta.example"], [MODE_OFF]],
    );
    const json = await cli(server, "domain-allows", "list", "--json");
    assert.equal(json.code, 0);
    const entities = JSON.parse(json.out.join("\n")) as Array<{ id: string; domain: string; created_at: string }>;
    assert.deepEqual(
      entities.map((e) => e.domain),
      ["alpha.example", "xn--bcher-kva.example", "zeta.example"],
    );
    for (const entity of entities) {
      assert.deepEqual(Object.keys(entity).sort(), ["created_at", "domain", "id"]);
      assert.match(entity.id, /^\d+$/);
    }
  });

  test("remove takes the domain off (written any way); a domain not on the list exits 1", async () => {
    const account = await createRemoteAccount(server.ctx, "zetan", "zeta.example");
    const removed = await cli(server, "domain-allows", "remove", "ZETA.example.");
    assert.deepEqual([removed.code, removed.out, removed.err], [0, ["Removed zeta.example"], []]);
    assert.ok(!(await allowed(server)).includes("zeta.example"));
    // Outside limited mode nothing else happens.
    const row = await server.ctx.db.kysely
      .selectFrom("accounts")
      .select("suspended_at")
      .where("id", "=", account.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.suspended_at, null);

    const missing = await cli(server, "domain-allows", "remove", "zeta.example");
    assert.deepEqual([missing.code, missing.out, missing.err], [1, [], ["zeta.example is not allowed"]]);
  });

  test("wrong positionals exit 1 without opening the database", async () => {
    for (const argv of [["add"], ["add", "a.example", "b.example"], ["remove"], ["list", "extra"]]) {
      const result = await cli(server, "domain-allows", ...argv);
      assert.equal(result.code, 1, argv.join(" "));
      assert.equal(result.opened, 0, argv.join(" "));
    }
  });

  test("--help of each command, the group and the overview say what the list is for", async () => {
    const commands = COMMANDS.filter((c) => c.path[0] === "domain-allows");
    assert.deepEqual(
      commands.map((c) => c.path.join(" ")),
      ["domain-allows list", "domain-allows add", "domain-allows remove"],
    );
    for (const command of commands) {
      const help = await cli(server, ...command.path, "--help");
      assert.equal(help.code, 0);
      assert.equal(help.opened, 0);
      assert.ok(help.out.join("\n").startsWith(`Usage: rookery ${command.usage}\n`));
    }
    const list = (await cli(server, "domain-allows", "list", "--help")).out.join("\n");
    assert.match(list, /LIMITED_FEDERATION_MODE=true/);
    assert.match(list, /--json/);
    assert.match((await cli(server, "domain-allows", "remove", "--help")).out.join("\n"), /suspended.*job/s);
    const group = await cli(server, "domain-allows");
    assert.equal(group.code, 1);
    for (const usage of ["domain-allows list [--json]", "domain-allows add DOMAIN", "domain-allows remove DOMAIN"])
      assert.ok(group.out.join("\n").includes(`rookery ${usage}`), usage);
    assert.match((await cli(server, "--help")).out.join("\n"), /domain-allows list .*LIMITED_FEDERATION_MODE=true/);
  });
});

describe("rookery domain-allows in limited federation mode", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer({ env: { LIMITED_FEDERATION_MODE: "true" } });
  });
  after(() => server.close());

  test("no note on stderr; remove suspends the domain's accounts and the job removes their posts", async () => {
    const added = await cli(server, "domain-allows", "add", "leaving.example");
    assert.deepEqual([added.code, added.out, added.err], [0, ["Allowed leaving.example"], []]);
    assert.deepEqual((await cli(server, "domain-allows", "list")).err, []);

    const account = await createRemoteAccount(server.ctx, "leaver", "leaving.example");
    const now = new Date().toISOString();
    const statusId = newId();
    await server.ctx.db.kysely
      .insertInto("statuses")
      .values({
        id: statusId,
        uri: `https://leaving.example/statuses/${statusId}`,
        url: `https://leaving.example/@leaver/${statusId}`,
        account_id: account.id,
        text: "",
        content: "<p>bye</p>",
        visibility: "public",
        local: false,
        created_at: now,
        updated_at: now,
      })
      .execute();

    const removed = await cli(server, "domain-allows", "remove", "leaving.example");
    assert.deepEqual(
      [removed.code, removed.out, removed.err],
      [0, ["Removed leaving.example; its accounts are suspended and a job removes their posts and follows"], []],
    );
    const row = await server.ctx.db.kysely
      .selectFrom("accounts")
      .select("suspended_at")
      .where("id", "=", account.id)
      .executeTakeFirstOrThrow();
    assert.notEqual(row.suspended_at, null);
    await server.ctx.jobs.drain();
    const left = await server.ctx.db.kysely.selectFrom("statuses").select("id").where("id", "=", statusId).execute();
    assert.deepEqual(left, []);
  });
});
