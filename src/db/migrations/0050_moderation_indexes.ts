import { sql, type Kysely } from "kysely";
import { columnTypes, type Engine, type RookeryMigration } from "./types.ts";

/**
 * The moderation lists read their index in the order they page by and stop after the page
 * (test/db/plans.test.ts has a case for each):
 * - accounts by status (suspended, silenced, sensitized: a few among many), and users waiting for
 *   approval, disabled, or holding a role, by account: the admin accounts list pages by account ID;
 * - the users seen at an address (sign-up or a browser session), for the list's IP filter;
 * - appeals waiting for a decision, newest first (the queue; most appeals are decided);
 * - the audit log by moderator, by record (a report's history) and by the record's name, newest
 *   first: the two indexes of 0041 gain the ID, which PostgreSQL's indexes do not hold by themselves.
 * Partial indexes hold only the rows their list reads. A boolean is compared with its literal
 * (`approved = false`, SQLite's `approved = 0`), which is what the queries' bound values match.
 */
export const moderationIndexes: RookeryMigration = {
  name: "0050_moderation_indexes",
  // deno-lint-ignore no-explicit-any
  async up(db: Kysely<any>, engine: Engine) {
    const t = columnTypes(engine);
    for (const column of ["suspended_at", "silenced_at", "sensitized_at"])
      await sql
        .raw(`CREATE INDEX index_accounts_${column.replace(/_at$/, "")} ON accounts (id) WHERE ${column} IS NOT NULL`)
        .execute(db);
    await sql.raw(`CREATE INDEX index_users_pending ON users (account_id) WHERE approved = ${t.false}`).execute(db);
    await sql.raw(`CREATE INDEX index_users_disabled ON users (account_id) WHERE disabled = ${t.true}`).execute(db);
    await sql`CREATE INDEX index_users_on_role_id ON users (role_id, account_id) WHERE role_id IS NOT NULL`.execute(db);
    await sql`CREATE INDEX index_users_on_sign_up_ip ON users (sign_up_ip) WHERE sign_up_ip IS NOT NULL`.execute(db);
    await sql`CREATE INDEX index_web_sessions_on_ip ON web_sessions (ip) WHERE ip IS NOT NULL`.execute(db);
    await sql`CREATE INDEX index_appeals_pending ON appeals (id) WHERE approved_at IS NULL AND rejected_at IS NULL`.execute(
      db,
    );
    await db.schema.dropIndex("index_admin_action_logs_on_account_id").execute();
    await db.schema
      .createIndex("index_admin_action_logs_on_account_id")
      .on("admin_action_logs")
      .columns(["account_id", "id"])
      .execute();
    await db.schema.dropIndex("index_admin_action_logs_on_target").execute();
    await db.schema
      .createIndex("index_admin_action_logs_on_target")
      .on("admin_action_logs")
      .columns(["target_type", "target_id", "id"])
      .execute();
    await sql`CREATE INDEX index_admin_action_logs_on_target_name ON admin_action_logs (lower(human_identifier), id)`.execute(
      db,
    );
  },
};
