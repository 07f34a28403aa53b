import { sql, type CreateTableBuilder, type Kysely } from "kysely";
import { columnTypes, type ColumnTypes, type Engine, type RookeryMigration } from "./types.ts";

// deno-lint-ignore no-explicit-any
type AnyDb = Kysely<any>;
// deno-lint-ignore no-explicit-any
type Table = CreateTableBuilder<any, any>;

function timestamps(table: Table, t: ColumnTypes): Table {
  return table
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull());
}

function flag(table: Table, t: ColumnTypes, name: string, fallback: boolean): Table {
  return table.addColumn(name, t.boolean, (c) => c.notNull().defaultTo(sql.raw(fallback ? t.true : t.false)));
}

function counter(table: Table, name: string): Table {
  return table.addColumn(name, "integer", (c) => c.notNull().defaultTo(0));
}

async function createAccounts(db: AnyDb, t: ColumnTypes): Promise<void> {
  let table = db.schema
    .createTable("accounts")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("username", "text", (c) => c.notNull())
    .addColumn("domain", "text")
    .addColumn("display_name", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("note", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("note_text", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("fields", "text", (c) => c.notNull().defaultTo("[]"))
    .addColumn("actor_type", "text", (c) => c.notNull().defaultTo("Person"));
  table = flag(table, t, "locked", false);
  table = table.addColumn("discoverable", t.boolean).addColumn("hide_collections", t.boolean);
  table = flag(table, t, "indexable", false);
  table = flag(table, t, "memorial", false);
  for (const image of ["avatar", "header"]) {
    table = table
      .addColumn(`${image}_file`, "text")
      .addColumn(`${image}_remote_url`, "text")
      .addColumn(`${image}_static_file`, "text")
      .addColumn(`${image}_description`, "text", (c) => c.notNull().defaultTo(""));
  }
  table = table
    .addColumn("uri", "text", (c) => c.notNull().unique())
    .addColumn("url", "text")
    .addColumn("inbox_url", "text")
    .addColumn("shared_inbox_url", "text")
    .addColumn("outbox_url", "text")
    .addColumn("followers_url", "text")
    .addColumn("following_url", "text")
    .addColumn("featured_url", "text")
    .addColumn("public_key", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("private_key", "text")
    .addColumn("suspended_at", t.timestamp)
    .addColumn("silenced_at", t.timestamp)
    .addColumn("moved_to_account_id", t.id, (c) => c.references("accounts.id").onDelete("set null"));
  table = counter(table, "followers_count");
  table = counter(table, "following_count");
  table = counter(table, "statuses_count");
  table = table.addColumn("last_status_at", t.timestamp).addColumn("fetched_at", t.timestamp);
  await timestamps(table, t).execute();
  await sql`CREATE UNIQUE INDEX index_accounts_on_username_and_domain ON accounts (lower(username), coalesce(domain, ''))`.execute(
    db,
  );
  await db.schema.createIndex("index_accounts_on_domain").on("accounts").column("domain").execute();
}

async function createRolesAndUsers(db: AnyDb, t: ColumnTypes): Promise<void> {
  let roles = db.schema
    .createTable("user_roles")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("color", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("permissions", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("position", "integer", (c) => c.notNull().defaultTo(0));
  roles = flag(roles, t, "highlighted", false);
  await timestamps(roles, t).execute();

  let users = db.schema
    .createTable("users")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("account_id", t.id, (c) => c.notNull().unique().references("accounts.id").onDelete("cascade"))
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("encrypted_password", "text")
    .addColumn("role_id", t.id, (c) => c.references("user_roles.id").onDelete("set null"))
    .addColumn("confirmed_at", t.timestamp)
    .addColumn("confirmation_token", "text", (c) => c.unique())
    .addColumn("confirmation_sent_at", t.timestamp)
    .addColumn("unconfirmed_email", "text");
  users = flag(users, t, "approved", true);
  users = flag(users, t, "disabled", false);
  users = users
    .addColumn("locale", "text")
    .addColumn("created_by_application_id", t.id)
    .addColumn("sign_up_ip", "text")
    .addColumn("reason", "text")
    .addColumn("settings", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("current_sign_in_at", t.timestamp)
    .addColumn("last_sign_in_at", t.timestamp);
  await timestamps(users, t).execute();
  await sql`CREATE UNIQUE INDEX index_users_on_email ON users (lower(email))`.execute(db);

  await db.schema
    .createTable("user_activity_days")
    .addColumn("user_id", t.id, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("day", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("user_activity_days_pkey", ["user_id", "day"])
    .execute();
  await db.schema.createIndex("index_user_activity_days_on_day").on("user_activity_days").column("day").execute();
}

async function createOauth(db: AnyDb, t: ColumnTypes): Promise<void> {
  let apps = db.schema
    .createTable("oauth_applications")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("website", "text")
    .addColumn("redirect_uri", "text", (c) => c.notNull())
    .addColumn("scopes", "text", (c) => c.notNull())
    .addColumn("client_id", "text", (c) => c.notNull().unique())
    .addColumn("client_secret", "text", (c) => c.notNull());
  apps = flag(apps, t, "superapp", false);
  await timestamps(apps, t).execute();

  await db.schema
    .createTable("oauth_access_tokens")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("token_digest", "text", (c) => c.notNull().unique())
    .addColumn("application_id", t.id, (c) => c.references("oauth_applications.id").onDelete("cascade"))
    .addColumn("user_id", t.id, (c) => c.references("users.id").onDelete("cascade"))
    .addColumn("scopes", "text", (c) => c.notNull())
    .addColumn("revoked_at", t.timestamp)
    .addColumn("last_used_at", t.timestamp)
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("index_oauth_access_tokens_on_user_id")
    .on("oauth_access_tokens")
    .column("user_id")
    .execute();

  await db.schema
    .createTable("oauth_access_grants")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("code_digest", "text", (c) => c.notNull().unique())
    .addColumn("application_id", t.id, (c) => c.notNull().references("oauth_applications.id").onDelete("cascade"))
    .addColumn("user_id", t.id, (c) => c.notNull().references("users.id").onDelete("cascade"))
    .addColumn("redirect_uri", "text", (c) => c.notNull())
    .addColumn("scopes", "text", (c) => c.notNull())
    .addColumn("code_challenge", "text")
    .addColumn("code_challenge_method", "text")
    .addColumn("expires_at", t.timestamp, (c) => c.notNull())
    .addColumn("revoked_at", t.timestamp)
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .execute();
}

async function createStatuses(db: AnyDb, t: ColumnTypes): Promise<void> {
  let table = db.schema
    .createTable("statuses")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("uri", "text", (c) => c.notNull().unique())
    .addColumn("url", "text")
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("text", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("content", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("spoiler_text", "text", (c) => c.notNull().defaultTo(""));
  table = flag(table, t, "sensitive", false);
  table = table
    .addColumn("visibility", "text", (c) => c.notNull())
    .addColumn("language", "text")
    .addColumn("in_reply_to_id", t.id)
    .addColumn("in_reply_to_account_id", t.id)
    .addColumn("reblog_of_id", t.id, (c) => c.references("statuses.id").onDelete("cascade"))
    .addColumn("conversation_id", t.id)
    .addColumn("application_id", t.id, (c) => c.references("oauth_applications.id").onDelete("set null"));
  table = flag(table, t, "local", true);
  table = counter(table, "replies_count");
  table = counter(table, "reblogs_count");
  table = counter(table, "favourites_count");
  table = table.addColumn("edited_at", t.timestamp).addColumn("deleted_at", t.timestamp);
  await timestamps(table, t).execute();
  await db.schema
    .createIndex("index_statuses_on_account_id_and_id")
    .on("statuses")
    .columns(["account_id", "id"])
    .execute();
  await db.schema.createIndex("index_statuses_on_in_reply_to_id").on("statuses").column("in_reply_to_id").execute();
  await db.schema
    .createIndex("index_statuses_on_reblog_of_id")
    .on("statuses")
    .columns(["reblog_of_id", "account_id"])
    .execute();
}

async function createInstanceTables(db: AnyDb, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable("instance_settings")
    .addColumn("key", "text", (c) => c.primaryKey())
    .addColumn("value", "text", (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();

  let emojis = db.schema
    .createTable("custom_emojis")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("shortcode", "text", (c) => c.notNull())
    .addColumn("domain", "text")
    .addColumn("uri", "text")
    .addColumn("image_file", "text")
    .addColumn("image_remote_url", "text")
    .addColumn("image_static_file", "text");
  emojis = flag(emojis, t, "disabled", false);
  emojis = flag(emojis, t, "visible_in_picker", true);
  emojis = emojis.addColumn("category", "text");
  await timestamps(emojis, t).execute();
  await sql`CREATE UNIQUE INDEX index_custom_emojis_on_shortcode_and_domain ON custom_emojis (shortcode, coalesce(domain, ''))`.execute(
    db,
  );

  await db.schema
    .createTable("jobs")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("run_at", t.timestamp, (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("max_attempts", "integer", (c) => c.notNull().defaultTo(5))
    .addColumn("locked_until", t.timestamp)
    .addColumn("locked_by", "text")
    .addColumn("last_error", "text")
    .addColumn("failed_at", t.timestamp)
    .addColumn("unique_key", "text")
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex("index_jobs_on_run_at").on("jobs").column("run_at").execute();
  // At most one live job per unique key (recurring jobs), however many processes schedule it.
  await sql`CREATE UNIQUE INDEX index_jobs_on_unique_key ON jobs (unique_key) WHERE unique_key IS NOT NULL AND failed_at IS NULL`.execute(
    db,
  );
}

export const foundation: RookeryMigration = {
  name: "0001_foundation",
  async up(db: AnyDb, engine: Engine) {
    const t = columnTypes(engine);
    await createAccounts(db, t);
    await createRolesAndUsers(db, t);
    await createOauth(db, t);
    await createStatuses(db, t);
    await createInstanceTables(db, t);
  },
};
