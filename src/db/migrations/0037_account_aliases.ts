import type { Kysely } from "kysely";
import type { Engine, RookeryMigration } from "./types.ts";

/**
 * A local account's aliases (`alsoKnownAs`): the actor ids of its accounts elsewhere, JSON array
 * of strings. Another server accepts a Move to this account only from an account named here.
 */
export const accountAliases: RookeryMigration = {
  name: "0037_account_aliases",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, _engine: Engine) {
    await db.schema.alterTable("accounts").addColumn("also_known_as", "text").execute();
  },
};
