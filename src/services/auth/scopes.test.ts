import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isKnownScope, parentScope, parseScopes, scopesAllow } from "./scopes.ts";

describe("scopes", () => {
  test("a scope is covered by itself and by the scopes above it", () => {
    assert.ok(scopesAllow(["read"], ["read:statuses"]));
    assert.ok(scopesAllow(["read:statuses"], ["read:statuses"]));
    assert.ok(scopesAllow(["write"], ["write:media"]));
    assert.ok(scopesAllow(["admin:read"], ["admin:read:domain_blocks"]));
    assert.ok(scopesAllow(["admin:write:domain_blocks"], ["admin:write:domain_blocks"]));
  });

  test("siblings, other branches and lower scopes do not cover", () => {
    assert.ok(!scopesAllow(["read:accounts"], ["read:statuses"]));
    assert.ok(!scopesAllow(["write"], ["read:statuses"]));
    assert.ok(!scopesAllow(["read:statuses"], ["read"]));
    assert.ok(!scopesAllow(["admin:read"], ["admin:write:domain_blocks"]));
    assert.ok(!scopesAllow(["read"], ["admin:read:accounts"]));
    assert.ok(!scopesAllow(["read write"], ["read:statuses"]), "scopes must be split before checking");
  });

  test("follow counts only where an endpoint lists it; push is separate", () => {
    assert.ok(!scopesAllow(["follow"], ["write:follows"]));
    assert.ok(scopesAllow(["follow"], ["write:follows", "follow"]));
    assert.ok(!scopesAllow(["read", "write"], ["push"]));
  });

  test("any of several accepted scopes is enough", () => {
    assert.ok(scopesAllow(["profile"], ["read:accounts", "profile"]));
  });

  test("parsing and the list of known scopes", () => {
    assert.deepEqual(parseScopes("read  write+follow\npush"), ["read", "write", "follow", "push"]);
    assert.deepEqual(parseScopes(undefined), []);
    assert.equal(parentScope("read:statuses"), "read");
    assert.equal(parentScope("admin:read:accounts"), "admin:read");
    assert.equal(parentScope("read"), undefined);
    for (const scope of ["read", "write", "push", "follow", "profile", "read:statuses", "admin:write:ip_blocks"])
      assert.ok(isKnownScope(scope), scope);
    for (const scope of ["admin", "crypto", "read:everything", ""]) assert.ok(!isKnownScope(scope), scope);
  });
});
