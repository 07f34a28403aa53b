/**
 * Statements built once with Kysely and run again with other values. Building a statement (the
 * immutable operation tree, then the SQL text) can cost more than running it: the fan-out's
 * INSERT … SELECT with the feed rules took ~0.2 ms to build and a claim of a job ~0.1 ms, for
 * every inbound activity. Here the builder runs once per engine and shape, with named slots in
 * place of the values; later runs only fill the slots in.
 *
 * Everything that varies between runs must be a slot: a value written straight into the builder
 * (`new Date()`, a list whose length varies) is kept from the first run. A list of values is a
 * slot each, and its length part of the key.
 */
import { CompiledQuery, sql, type Compilable, type Kysely, type RawBuilder, type Selectable } from "kysely";
import type { Database } from "./schema.ts";

const SLOT = Symbol("slot");

/** A value's place in the statement, filled in at each run. */
interface Slot {
  readonly [SLOT]: string;
}

type Part = { slot: string } | { value: unknown };

interface Template {
  sql: string;
  parts: Part[];
}

/** Templates by dialect (a transaction's Kysely shares its adapter with the database's), then by key. */
const templates = new WeakMap<object, Map<string, Template>>();

function isSlot(value: unknown): value is Slot {
  return typeof value === "object" && value !== null && SLOT in value;
}

/**
 * The statement `key` with `values` in its slots. `build` receives `slot(name)`, to use where a
 * value goes; it runs only the first time `key` is asked for on this database's dialect.
 */
export function prepared<S extends string>(
  // deno-lint-ignore no-explicit-any
  db: Kysely<any>,
  key: string,
  build: (slot: (name: S) => unknown) => Compilable | RawBuilder<unknown>,
  values: Readonly<Record<S, unknown>>,
): CompiledQuery {
  const adapter = db.getExecutor().adapter;
  let cache = templates.get(adapter);
  if (!cache) templates.set(adapter, (cache = new Map()));
  let template = cache.get(key);
  if (!template) {
    const built = build((name) => ({ [SLOT]: name }) satisfies Slot);
    // A query builder compiles on its own; raw SQL with the database it will run on.
    const compiled = "isRawBuilder" in built ? built.compile(db) : (built as Compilable).compile();
    template = {
      sql: compiled.sql,
      parts: compiled.parameters.map((p) => (isSlot(p) ? { slot: p[SLOT] } : { value: p })),
    };
    cache.set(key, template);
  }
  const parameters = template.parts.map((part) => {
    if ("value" in part) return part.value;
    if (!(part.slot in values)) throw new Error(`prepared statement ${key}: no value for slot ${part.slot}`);
    return values[part.slot as S];
  });
  return CompiledQuery.raw(template.sql, parameters);
}

/**
 * The first row of `table` whose `column` equals `value`, all its columns: the lookups by key that
 * run for every inbound activity (a post or an actor by its URI), built once per table and column.
 */
export async function rowWhere<T extends keyof Database & string>(
  db: Kysely<Database>,
  table: T,
  column: keyof Database[T] & string,
  value: unknown,
): Promise<Selectable<Database[T]> | undefined> {
  // deno-lint-ignore no-explicit-any
  const untyped = db as unknown as Kysely<any>;
  const query = prepared<"value">(
    db,
    `row.${table}.${column}`,
    (slot) => untyped.selectFrom(table).selectAll().where(sql.ref(column), "=", slot("value")).limit(1),
    { value },
  );
  return (await db.executeQuery<Selectable<Database[T]>>(query)).rows[0];
}
