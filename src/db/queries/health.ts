import { sql, type Kysely } from "kysely";
import type { Database } from "../schema.ts";

/** One round trip to the database; throws when it does not answer. */
export async function pingDatabase(db: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(db);
}
