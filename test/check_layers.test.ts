/** scripts/check_layers.ts: the one-way layers are enforced by `npm run check`. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";

const script = join(import.meta.dirname, "..", "scripts", "check_layers.ts");

function run(root?: string) {
  return spawnSync(process.execPath, [script, ...(root ? [root] : [])], { encoding: "utf8" });
}

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "rookery-layers-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

test("the project's own tree keeps the layers", () => {
  const result = run();
  assert.equal(result.status, 0, result.stderr);
});

test("an import from a service into the HTTP edge and a query in a route module are refused", () => {
  const root = tree({
    "src/services/statuses/find.ts": 'import { userOf } from "../../api/auth.ts";\nexport const x = userOf;\n',
    "src/entities/thing.ts": 'import { page } from "../web/render.ts";\n',
    "src/api/v1/things.ts": 'const rows = await ctx.db.kysely\n  .selectFrom("statuses")\n  .selectAll();\n',
    "src/db/queries/multi.ts": 'import {\n  html,\n  SafeHtml,\n} from "../../web/html.ts";\n',
    "src/api/v1/fine.ts": 'import { statusById } from "../../db/queries/statuses.ts";\n',
  });
  try {
    const result = run(root);
    assert.equal(result.status, 1);
    assert.match(result.stderr, /src\/services\/statuses\/find\.ts:1: services\/ imports from api\//);
    assert.match(result.stderr, /src\/entities\/thing\.ts:1: entities\/ imports from web\//);
    assert.match(result.stderr, /src\/api\/v1\/things\.ts:2: a query in a route module/);
    assert.match(result.stderr, /src\/db\/queries\/multi\.ts:4: db\/ imports from web\//);
    assert.doesNotMatch(result.stderr, /fine\.ts/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("entities importing services, text reaching for the database, and producers importing reactions are refused", () => {
  const root = tree({
    "src/entities/thing.ts": 'import { decide } from "../services/things/rules.ts";\n',
    "src/text/render.ts":
      'import type { AccountRow } from "../db/schema.ts";\nimport { url } from "../entities/account.ts";\n',
    "src/services/statuses/post.ts": 'import { publishStatus } from "../streaming/publish.ts";\n',
    "src/services/accounts/follow.ts": 'import {\n  notifyOfFollow,\n} from "../notifications/triggers.ts";\n',
    "src/services/streaming/streams.ts": 'import { homeChannel } from "./publish.ts";\n',
    "src/subscribers.ts": 'import { publishStatus } from "./services/streaming/publish.ts";\n',
    "src/services/media/fetch.ts": 'import { resolver } from "../../federation/resolver.ts";\n',
    "src/events/types.ts": 'import type { StatusRow } from "../db/schema.ts";\n',
  });
  try {
    const result = run(root);
    assert.equal(result.status, 1);
    assert.match(result.stderr, /src\/entities\/thing\.ts:1: entities\/ imports from services/);
    assert.match(result.stderr, /src\/text\/render\.ts:1: text\/ imports from db/);
    assert.match(result.stderr, /src\/text\/render\.ts:2: text\/ imports from entities/);
    assert.match(result.stderr, /src\/services\/statuses\/post\.ts:1: a producer imports a reaction/);
    assert.match(result.stderr, /src\/services\/accounts\/follow\.ts:3: a producer imports a reaction/);
    assert.match(result.stderr, /src\/services\/media\/fetch\.ts:1: services\/ imports from federation\//);
    assert.doesNotMatch(result.stderr, /streams\.ts|subscribers\.ts|events\/types\.ts/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("two service areas importing each other are refused, once a pair, with an import of each side", () => {
  const root = tree({
    "src/services/admin/audit.ts": 'import type { Kysely } from "kysely";\nexport const recordAction = 1;\n',
    "src/services/admin/mails.ts": 'import { loadSettings } from "../instance/settings.ts";\n',
    "src/services/admin/rules.ts": 'import {\n  loadSettings,\n} from "../instance/settings.ts";\n',
    "src/services/instance/settings.ts":
      'import type { Kysely } from "kysely";\nimport { recordAction } from "../admin/audit.ts";\n',
    "src/services/moderation/appeals.ts": 'import { recordAction } from "../admin/audit.ts";\n',
    "src/services/accounts/confirmation.ts": 'import { issueToken } from "../auth/tokens.ts";\n',
    "src/services/auth/viewer.ts": 'import { roleOf } from "../accounts/roles.ts";\n',
  });
  try {
    const result = run(root);
    assert.equal(result.status, 1);
    const pairs = result.stderr.split("\n").filter((line) => line.includes("import each other"));
    assert.equal(pairs.length, 1, result.stderr);
    assert.match(
      pairs[0],
      /^src\/services\/admin\/mails\.ts:1: services\/admin and services\/instance import each other \(src\/services\/instance\/settings\.ts:2 imports back\)/,
    );
    // One way (moderation → admin) is the layering; accounts ↔ auth is the documented exception.
    assert.doesNotMatch(result.stderr, /services\/moderation|services\/accounts and services\/auth/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
