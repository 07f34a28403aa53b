/**
 * JSON-LD expansion once per object. Fedify's vocabulary parses an object by expanding its
 * JSON-LD, and every class of its hierarchy expands again what it is given: a `Create` that
 * reaches an inbox is expanded twice from its compact form (once to learn its type, once by
 * `Create` itself), then its expanded form and each object in it again on every level of the
 * hierarchy — 15 calls of `jsonld.expand` for a Mastodon `Create(Note)`, ~0.6 ms of the ~3 ms a
 * worker spent storing one (bench/RESULTS.md).
 *
 * Expansion is idempotent: an expanded node object expands to itself. So `expand` of the jsonld
 * instance Fedify shares (`@fedify/vocab-runtime/jsonld`) is wrapped once per process:
 * - a node object an expansion produced comes back at once, as a shallow copy (Fedify deletes
 *   `@type` from what it gets back, so never the object itself; the nodes inside are shared and
 *   only read);
 * - a compact document expanded again with the same context loader gets a copy of the first
 *   result: the vocabulary never changes the documents it parses.
 * Anything else (other options, value objects, lists, graphs) goes to jsonld as before.
 */
import jsonld from "@fedify/vocab-runtime/jsonld";

type Expand = (input: unknown, options?: Record<string, unknown>) => Promise<unknown[]>;

interface ExpandApi {
  expand: Expand;
}

const api = jsonld as unknown as ExpandApi;
/** jsonld's own `expand`. */
const original: Expand = api.expand.bind(api);
/** How many expansions went to jsonld through `expandOnce` (for tests and diagnostics). */
let forwarded = 0;
export const forwardedExpansions = (): number => forwarded;

/** Node objects that expansions produced (or copies of them made here). */
const expandedNodes = new WeakSet<object>();
/** The results of expanding compact documents, by document, with the context loader used. */
const compactResults = new WeakMap<object, { loader: unknown; result: unknown[] }>();

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A node object: not a value, list, set or graph object. */
const isNode = (value: Record<string, unknown>) =>
  !("@value" in value) && !("@list" in value) && !("@set" in value) && !("@graph" in value);

/** Marks every node object in `value`, an expansion's result, as expanded. */
function mark(value: unknown): void {
  if (Array.isArray(value)) {
    for (const item of value) mark(item);
    return;
  }
  if (!isPlainObject(value)) return;
  if (isNode(value)) expandedNodes.add(value);
  for (const key in value) if (key !== "@id" && key !== "@type") mark(value[key]);
}

/** Copies of the top-level nodes of a result, marked (what is inside them is shared). */
function copyOf(result: readonly unknown[]): unknown[] {
  return result.map((item) => {
    if (!isPlainObject(item)) return item;
    const copy = { ...item };
    if (isNode(copy)) expandedNodes.add(copy);
    return copy;
  });
}

/** Only the options Fedify's parsing passes are answered here. */
function isParsing(options: Record<string, unknown> | undefined): boolean {
  if (!options || options.keepFreeFloatingNodes !== true) return false;
  for (const key in options) if (key !== "documentLoader" && key !== "keepFreeFloatingNodes") return false;
  return true;
}

export const expandOnce: Expand = async (input, options) => {
  if (!isParsing(options) || !isPlainObject(input)) {
    forwarded++;
    return original(input, options);
  }
  if (expandedNodes.has(input)) return copyOf([input]);
  const loader = options!.documentLoader;
  const known = compactResults.get(input);
  if (known && known.loader === loader) return copyOf(known.result);
  forwarded++;
  const result = await original(input, options);
  mark(result);
  compactResults.set(input, { loader, result });
  return copyOf(result);
};

/** Puts `expandOnce` in the place of jsonld's `expand` (once; again is harmless). */
export function installExpansionOnce(): void {
  api.expand = expandOnce;
}

/** Runs `work` with jsonld's own `expand` (for tests that compare the two). */
export async function withPlainExpansion<T>(work: () => Promise<T>): Promise<T> {
  const installed = api.expand;
  api.expand = original;
  try {
    return await work();
  } finally {
    api.expand = installed;
  }
}
