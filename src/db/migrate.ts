import type { Kysely } from "kysely";
import { Migrator, type Migration, type MigrationResultSet } from "kysely/migration";
import type { Db } from "./connect.ts";
import { foundation } from "./migrations/0001_foundation.ts";
import { defaultRoles } from "./migrations/0002_default_roles.ts";
import { signIn } from "./migrations/0003_sign_in.ts";
import { statuses } from "./migrations/0004_statuses.ts";
import { timelineIndexes } from "./migrations/0005_timeline_indexes.ts";
import type { RookeryMigration } from "./migrations/types.ts";

/** Every migration, in order. Append only: never edit one that has shipped. */
export const MIGRATIONS: readonly RookeryMigration[] = [foundation, defaultRoles, signIn, statuses, timelineIndexes];

/** Applies the pending migrations; returns the names applied. Throws with the failing migration's name. */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrations: Record<string, Migration> = {};
  for (const migration of MIGRATIONS) {
    // deno-lint-ignore no-explicit-any
    migrations[migration.name] = { up: (kysely: Kysely<any>) => migration.up(kysely, db.engine) };
  }
  const migrator = new Migrator({
    db: db.kysely,
    provider: { getMigrations: async () => migrations },
    // Without a schema Kysely looks for its bookkeeping tables in every schema of the database.
    migrationTableSchema: db.schema,
  });
  const result: MigrationResultSet = await migrator.migrateToLatest();
  const failed = result.results?.find((r) => r.status === "Error");
  if (result.error) {
    const cause = result.error instanceof Error ? result.error.message : String(result.error);
    throw new Error(`Migration ${failed?.migrationName ?? "(unknown)"} failed: ${cause}`);
  }
  return (result.results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName);
}
