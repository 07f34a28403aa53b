/**
 * Keeps the layers one-way (docs/architecture.md): the edges (api/, web/, federation/) → services
 * → db / entities / text.
 * - Nothing below the edges (services, entities, db, text, events, realtime, media) imports from
 *   an edge: src/api, src/web or src/federation.
 * - Route modules (src/api, src/web) run no query of their own: no Kysely builder or raw SQL.
 * - entities/ never imports services/ (serializers decide nothing); text/ imports neither db/,
 *   entities/ nor services/ (it renders what it is given); events/ imports no service.
 * - A producer never imports its consumers: the reactions to domain events (streaming/publish.ts,
 *   notifications/triggers.ts, push/deliver.ts) are imported only by the subscriber table
 *   (src/subscribers.ts), the job handlers (src/jobs/) and their own area.
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
const LOWER = new Set(["services", "entities", "db", "text", "events", "realtime", "media"]);
const EDGE = new Set(["api", "web", "federation"]);
/** Layers a layer may never import, besides the edges. */
const FORBIDDEN: Record<string, ReadonlySet<string>> = {
  entities: new Set(["services"]),
  text: new Set(["db", "entities", "services", "context.ts"]),
  events: new Set(["services"]),
};
/** Modules that react to domain events, and who may import them besides their own area. */
const REACTIONS = ["services/streaming/publish.ts", "services/notifications/triggers.ts", "services/push/deliver.ts"];
const WIRING = new Set(["subscribers.ts", "jobs"]);
const areaOf = (path: string) => relative(src, path).split(sep).slice(0, 2).join("/");
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
    if (target?.startsWith(".")) {
      const targetPath = resolve(file, "..", target);
      const targetLayer = layerOf(targetPath);
      if (LOWER.has(layer) && EDGE.has(targetLayer))
        offences.push(`${where}: ${layer}/ imports from ${targetLayer}/ (${target})`);
      if (FORBIDDEN[layer]?.has(targetLayer))
        offences.push(`${where}: ${layer}/ imports from ${targetLayer.replace(/\.ts$/, "")} (${target})`);
      const reaction = REACTIONS.find((r) => relative(src, targetPath).split(sep).join("/") === r);
      if (reaction && !WIRING.has(layer) && areaOf(file) !== areaOf(targetPath))
        offences.push(`${where}: a producer imports a reaction to domain events (${target}); emit an event instead`);
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
