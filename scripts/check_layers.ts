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
 * - Two service areas (services/admin/, services/instance/, …) never import each other: one of
 *   them is the lower one. Each such pair is one offence, named with an import of each side;
 *   the pairs in MUTUAL are the known exceptions (and an exception that no longer happens is an
 *   offence too, so the list only shrinks).
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
/**
 * Service areas that import each other, by name (sorted), and why. `accounts` ↔ `auth` is by design
 * (a user's credentials and their tokens, docs/architecture.md); the others predate this check
 * and are to be untangled.
 */
const MUTUAL: Record<string, string> = {
  "accounts ↔ auth": "a user's credentials and their tokens",
  "accounts ↔ admin": "sign-up and remote accounts read the blocks admin/ keeps; admin/ acts on accounts",
  "accounts ↔ media": "media/ reads a profile's image limit; accounts/ queues profile images",
  "admin ↔ reports": "reports/ reads domain blocks; admin/ reads the report categories",
  "polls ↔ statuses": "polls/ takes the poll parameters statuses/ validates",
  "statuses ↔ timelines": "timelines/ reads the visibility type of statuses/",
};
/** The service area of a file under src/services: its folder, or a top-level module's name. */
const serviceAreaOf = (path: string) => {
  const [top, area] = relative(src, path).split(sep);
  return top === "services" && area ? area.replace(/\.ts$/, "") : undefined;
};
const QUERY = /\.(selectFrom|updateTable|insertInto|deleteFrom|replaceInto|mergeInto)\(|\.transaction\(\)|\bsql`/;
// The module a line imports from: `… from "./x.ts";` (also the last line of a multi-line import) or `import("./x.ts")`.
const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*)["']([^"']+)["']/;

const offences: string[] = [];
/** The first import of each service area into another, by "from → to": where it is. */
const areaImports = new Map<string, string>();
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
      const [from, to] = [serviceAreaOf(file), serviceAreaOf(targetPath)];
      if (from && to && from !== to && !areaImports.has(`${from} → ${to}`)) areaImports.set(`${from} → ${to}`, where);
    }
    if (EDGE.has(layer) && QUERY.test(line))
      offences.push(`${where}: a query in a route module; call a service or a named query`);
  });
}

const mutual = new Set<string>();
for (const [edge, where] of areaImports) {
  const [from, to] = edge.split(" → ");
  const back = areaImports.get(`${to} → ${from}`);
  if (!back || from > to) continue;
  const pair = `${from} ↔ ${to}`;
  mutual.add(pair);
  if (!MUTUAL[pair])
    offences.push(
      `${where}: services/${from} and services/${to} import each other (${back} imports back); move what the lower one needs down into it`,
    );
}
// An exception whose two areas are both still there but no longer import each other has been mended.
const areas = new Set([...areaImports.keys()].flatMap((edge) => edge.split(" → ")));
for (const pair of Object.keys(MUTUAL))
  if (!mutual.has(pair) && pair.split(" ↔ ").every((area) => areas.has(area)))
    offences.push(`scripts/check_layers.ts: ${pair} is an exception in MUTUAL that no longer happens; remove it`);

if (offences.length > 0) {
  console.error(`Layering: ${offences.length} offence(s)\n${offences.join("\n")}`);
  process.exit(1);
}
console.log("Layering: routes → services → db/entities holds.");
