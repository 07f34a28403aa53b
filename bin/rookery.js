#!/usr/bin/env node
// Entry point of `npx rookery`. Rookery runs on Node 24 (TypeScript without a build step); on an
// older Node this re-runs itself with the Node 24 that `npm install` put in node_modules.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const [major] = process.versions.node.split(".").map(Number);
if (major < 24) {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  const node = join(root, "node_modules", "node", "bin", "node");
  if (!existsSync(node)) {
    process.stderr.write("rookery: Node 24 is needed; run `npm install` in the Rookery folder first.\n");
    process.exit(1);
  }
  const result = spawnSync(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit" });
  process.exit(result.status ?? 1);
}

const { runCli } = await import("../src/cli/main.ts");
const io = { out: (line) => process.stdout.write(`${line}\n`), err: (line) => process.stderr.write(`${line}\n`) };
process.exitCode = await runCli(process.argv.slice(2), io);
