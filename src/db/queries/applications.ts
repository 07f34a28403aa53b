/** Named lookups of OAuth application rows (see db/queries/statuses.ts for the conventions). */
import type { Kysely } from "kysely";
import { isIdLike } from "../ids.ts";
import type { ApplicationRow, Database } from "../schema.ts";

export async function applicationById(
  db: Kysely<Database>,
  id: string | null | undefined,
): Promise<ApplicationRow | undefined> {
  if (!id || !isIdLike(id)) return undefined;
  return db.selectFrom("oauth_applications").selectAll().where("id", "=", id).executeTakeFirst();
}
