/**
 * Keeps the layers one-way (docs/architecture.md): routes → services → db / entities.
 * - Nothing in src/services, src/entities or src/db imports from src/api or src/web.
 * - Route modules (src/api, src/web) run no query of their own: no Kysely builder or raw SQL.
 * Run by `npm run check`; prints each offence with its file and line, exits 1 if there is one.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";

// The project root (this script's parent), or the one given as the first argument (tests use that).
const root = resolve(process.argv[2] ?? resolve(import.meta.dirname, ".."));
const src = join(root, "src");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return path.endsWith(".ts") && !path.endsWith(".test.ts") ? [path] : [];
  });
}

const layerOf = (path: string) => relative(src, path).split(sep)[0];
const LOWER = new Set(["services", "entities", "db"]);
const EDGE = new Set(["api", "web"]);
const QUERY = /\.(selectFrom|updateTable|insertInto|deleteFrom|replaceInto|mergeInto)\(|\.transaction\(\)|\bsql`/;
// The module a line imports from: `… from "./x.ts";` (also the last line of a multi-line import) or `import("./x.ts")`.
const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*)["']([^"']+)["']/;

const offences: string[] = [];
for (const file of files(src)) {
  const layer = layerOf(file);
  const lines = readFileSync(file, "utf8").split("\n");
  lines.forEach((line, i) => {
    const where = `${relative(root, file)}:${i + 1}`;
    const target = IMPORT.exec(line)?.[1];
    if (target?.startsWith(".") && LOWER.has(layer)) {
      const targetLayer = layerOf(resolve(file, "..", target));
      if (EDGE.has(targetLayer)) offences.push(`${where}: ${layer}/ imports from ${targetLayer}/ (${target})`);
    }
    if (EDGE.has(layer) && QUERY.test(line))
      offences.push(`${where}: a query in a route module; call a service or a named query`);
  });
}

if (offences.length > 0) {
  console.error(`Layering: ${offences.length} offence(s)\n${offences.join("\n")}`);
  process.exit(1);
}
console.log("Layering: routes → services → db/entities holds.");
