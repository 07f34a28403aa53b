/**
 * `rookery roles`: list, create, modify and remove roles from the shell; a role's permissions
 * decide what its users may do through the admin API at once.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { COMMANDS } from "../src/cli/main.ts";
import { cli } from "./cli_run.ts";
import { helpText } from "../src/cli/command.ts";
import { createTestServer, createUser, request, tokenFor, type TestServer } from "./kit.ts";

describe("rookery roles", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer();
  });
  after(() => server.close());

  test("every roles command has help", () => {
    for (const command of COMMANDS.filter((c) => c.path[0] === "roles"))
      assert.match(helpText(command), new RegExp(`^Usage: rookery ${command.path.join(" ")}`));
  });

  test("list shows the default roles, highest first, with their permissions", async () => {
    const listed = await cli(server, "roles", "list", "--json");
    assert.equal(listed.code, 0, listed.err.join("\n"));
    const roles = JSON.parse(listed.out.join("\n")) as Array<{ name: string; position: number; permissions: string[] }>;
    assert.deepEqual(
      roles.map((r) => r.name),
      ["Owner", "Admin", "Moderator", "(everyone)"],
    );
    assert.deepEqual(roles[0]!.permissions, ["administrator"]);
    assert.ok(roles[2]!.permissions.includes("manage_reports"));
    const text = await cli(server, "roles", "list");
    assert.match(text.out.join("\n"), /^Owner {2}position 1000 {2}0 users {2}administrator$/m);
  });

  test("create, modify and remove a role; its permissions apply to its users at once", async () => {
    const created = await cli(
      server,
      "roles",
      "create",
      "Federation",
      "--permissions",
      "manage_federation",
      "--position",
      "50",
    );
    assert.equal(created.code, 0, created.err.join("\n"));
    const user = await createUser(server.ctx, "fedkeeper");
    assert.equal((await cli(server, "accounts", "modify", "fedkeeper", "--role", "Federation")).code, 0);
    const token = await tokenFor(server.ctx, user, "admin:read:domain_blocks admin:read:accounts");
    assert.equal((await request(server.app, "GET", "/api/v1/admin/domain_blocks", { token })).statusCode, 200);

    // Taking the permission away refuses at once; giving it back allows again.
    assert.equal(
      (await cli(server, "roles", "modify", "Federation", "--remove-permissions", "manage_federation")).code,
      0,
    );
    assert.equal((await request(server.app, "GET", "/api/v1/admin/domain_blocks", { token })).statusCode, 403);
    assert.equal(
      (await cli(server, "roles", "modify", "Federation", "--add-permissions", "manage_federation", "--name", "Fed"))
        .code,
      0,
    );
    assert.equal((await request(server.app, "GET", "/api/v1/admin/domain_blocks", { token })).statusCode, 200);

    assert.equal((await cli(server, "roles", "remove", "Fed")).code, 0);
    assert.equal((await request(server.app, "GET", "/api/v1/admin/domain_blocks", { token })).statusCode, 403);
    const listed = JSON.parse((await cli(server, "roles", "list", "--json")).out.join("\n")) as Array<{ name: string }>;
    assert.ok(!listed.some((r) => r.name === "Fed"));
  });

  test("refusals: unknown permissions, taken names, bad numbers, everyone's role kept", async () => {
    const unknown = await cli(server, "roles", "create", "X", "--permissions", "manage_everything");
    assert.equal(unknown.code, 1);
    assert.match(unknown.err.join("\n"), /Unknown permission manage_everything/);
    const taken = await cli(server, "roles", "create", "Admin");
    assert.equal(taken.code, 1);
    assert.match(taken.err.join("\n"), /A role named Admin exists/);
    const badPosition = await cli(server, "roles", "create", "Y", "--position", "high");
    assert.equal(badPosition.code, 1);
    assert.match(badPosition.err.join("\n"), /--position must be a whole number/);
    const badColor = await cli(server, "roles", "create", "Z", "--color", "red");
    assert.equal(badColor.code, 1);
    assert.match(badColor.err.join("\n"), /Color must be like/);
    const everyoneName = await cli(server, "roles", "modify", "everyone", "--name", "all");
    assert.equal(everyoneName.code, 1);
    assert.equal((await cli(server, "roles", "modify", "everyone", "--add-permissions", "invite_users")).code, 0);
    assert.equal((await cli(server, "roles", "remove", "nobody")).code, 1);
    assert.equal((await cli(server, "roles", "modify", "nobody", "--position", "1")).code, 1);
  });
});
