import type { Kysely } from "kysely";

export type Engine = "sqlite" | "postgres";

/** Column types that differ between the engines; migrations use these so one set serves both. */
export interface ColumnTypes {
  id: "bigint" | "integer";
  timestamp: "timestamptz" | "text";
  boolean: "boolean" | "integer";
  /** SQL literal for a boolean default. */
  true: string;
  false: string;
}

export function columnTypes(engine: Engine): ColumnTypes {
  return engine === "postgres"
    ? { id: "bigint", timestamp: "timestamptz", boolean: "boolean", true: "true", false: "false" }
    : { id: "integer", timestamp: "text", boolean: "integer", true: "1", false: "0" };
}

/** A migration that may need to know the engine it runs on. */
export interface RookeryMigration {
  name: string;
  // deno-lint-ignore no-explicit-any
  up(db: Kysely<any>, engine: Engine): Promise<void>;
}
