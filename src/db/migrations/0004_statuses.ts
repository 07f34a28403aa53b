import { sql, type CreateTableBuilder, type Kysely } from "kysely";
import { columnTypes, type ColumnTypes, type Engine, type RookeryMigration } from "./types.ts";

// deno-lint-ignore no-explicit-any
type AnyDb = Kysely<any>;
// deno-lint-ignore no-explicit-any
type Table = CreateTableBuilder<any, any>;

function flag(table: Table, t: ColumnTypes, name: string, fallback: boolean): Table {
  return table.addColumn(name, t.boolean, (c) => c.notNull().defaultTo(sql.raw(fallback ? t.true : t.false)));
}

/** A join row between an account and a status (favourites, bookmarks, pins), unique per pair. */
async function accountStatusTable(db: AnyDb, t: ColumnTypes, name: string): Promise<void> {
  await db.schema
    .createTable(name)
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("status_id", t.id, (c) => c.notNull().references("statuses.id").onDelete("cascade"))
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addUniqueConstraint(`${name}_account_status_unique`, ["account_id", "status_id"])
    .execute();
  await db.schema.createIndex(`index_${name}_on_status_id`).on(name).column("status_id").execute();
}

async function createGraph(db: AnyDb, t: ColumnTypes): Promise<void> {
  let follows = db.schema
    .createTable("follows")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("target_account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"));
  follows = flag(follows, t, "show_reblogs", true);
  follows = flag(follows, t, "notify", false);
  await follows
    .addColumn("languages", "text")
    .addColumn("uri", "text")
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .addUniqueConstraint("follows_account_target_unique", ["account_id", "target_account_id"])
    .execute();
  await db.schema.createIndex("index_follows_on_target_account_id").on("follows").column("target_account_id").execute();

  await db.schema
    .createTable("blocks")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("target_account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("uri", "text")
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addUniqueConstraint("blocks_account_target_unique", ["account_id", "target_account_id"])
    .execute();
  await db.schema.createIndex("index_blocks_on_target_account_id").on("blocks").column("target_account_id").execute();
}

async function createStatusParts(db: AnyDb, t: ColumnTypes): Promise<void> {
  await db.schema.alterTable("statuses").addColumn("ordered_media_attachment_ids", "text").execute();
  await db.schema.alterTable("statuses").addColumn("poll_id", t.id).execute();
  await db.schema.createIndex("index_statuses_on_conversation_id").on("statuses").column("conversation_id").execute();
  // One boost per account and status.
  await sql`CREATE UNIQUE INDEX index_statuses_on_account_id_and_reblog_of_id ON statuses (account_id, reblog_of_id) WHERE reblog_of_id IS NOT NULL`.execute(
    db,
  );

  let mentions = db.schema
    .createTable("mentions")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("status_id", t.id, (c) => c.notNull().references("statuses.id").onDelete("cascade"))
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"));
  mentions = flag(mentions, t, "silent", false);
  await mentions
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addUniqueConstraint("mentions_status_account_unique", ["status_id", "account_id"])
    .execute();
  await db.schema
    .createIndex("index_mentions_on_account_id_and_status_id")
    .on("mentions")
    .columns(["account_id", "status_id"])
    .execute();

  await db.schema
    .createTable("tags")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("display_name", "text")
    .addColumn("last_status_at", t.timestamp)
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await sql`CREATE UNIQUE INDEX index_tags_on_name_lower ON tags (lower(name))`.execute(db);

  await db.schema
    .createTable("statuses_tags")
    .addColumn("status_id", t.id, (c) => c.notNull().references("statuses.id").onDelete("cascade"))
    .addColumn("tag_id", t.id, (c) => c.notNull().references("tags.id").onDelete("cascade"))
    .addPrimaryKeyConstraint("statuses_tags_pkey", ["tag_id", "status_id"])
    .execute();
  await db.schema.createIndex("index_statuses_tags_on_status_id").on("statuses_tags").column("status_id").execute();

  await accountStatusTable(db, t, "favourites");
  await accountStatusTable(db, t, "bookmarks");
  await accountStatusTable(db, t, "status_pins");

  await db.schema
    .createTable("conversation_mutes")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("conversation_id", t.id, (c) => c.notNull())
    .addUniqueConstraint("conversation_mutes_unique", ["account_id", "conversation_id"])
    .execute();

  await db.schema
    .createTable("status_edits")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("status_id", t.id, (c) => c.notNull().references("statuses.id").onDelete("cascade"))
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("text", "text", (c) => c.notNull())
    .addColumn("content", "text", (c) => c.notNull())
    .addColumn("spoiler_text", "text", (c) => c.notNull())
    .addColumn("sensitive", t.boolean, (c) => c.notNull())
    .addColumn("language", "text")
    .addColumn("ordered_media_attachment_ids", "text")
    .addColumn("media_descriptions", "text")
    .addColumn("poll_options", "text")
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex("index_status_edits_on_status_id").on("status_edits").column("status_id").execute();

  await db.schema
    .createTable("idempotency_keys")
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("status_id", t.id)
    .addColumn("scheduled_status_id", t.id)
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint("idempotency_keys_pkey", ["account_id", "key"])
    .execute();
}

async function createMediaAndPolls(db: AnyDb, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable("media_attachments")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("status_id", t.id, (c) => c.references("statuses.id").onDelete("set null"))
    .addColumn("scheduled_status_id", t.id)
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("file", "text")
    .addColumn("file_content_type", "text")
    .addColumn("file_size", "integer")
    .addColumn("preview_file", "text")
    .addColumn("thumbnail_file", "text")
    .addColumn("remote_url", "text")
    .addColumn("description", "text")
    .addColumn("focus_x", "real")
    .addColumn("focus_y", "real")
    .addColumn("blurhash", "text")
    .addColumn("meta", "text", (c) => c.notNull().defaultTo("{}"))
    .addColumn("processing", "text", (c) => c.notNull().defaultTo("complete"))
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("index_media_attachments_on_status_id")
    .on("media_attachments")
    .column("status_id")
    .execute();
  await db.schema
    .createIndex("index_media_attachments_on_account_id")
    .on("media_attachments")
    .columns(["account_id", "status_id"])
    .execute();

  let polls = db.schema
    .createTable("polls")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("status_id", t.id, (c) => c.references("statuses.id").onDelete("cascade"))
    .addColumn("expires_at", t.timestamp)
    .addColumn("options", "text", (c) => c.notNull())
    .addColumn("cached_tallies", "text", (c) => c.notNull());
  polls = flag(polls, t, "multiple", false);
  polls = flag(polls, t, "hide_totals", false);
  await polls
    .addColumn("votes_count", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("voters_count", "integer")
    .addColumn("closed_at", t.timestamp)
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex("index_polls_on_status_id").on("polls").column("status_id").execute();

  await db.schema
    .createTable("poll_votes")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("poll_id", t.id, (c) => c.notNull().references("polls.id").onDelete("cascade"))
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("choice", "integer", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addUniqueConstraint("poll_votes_unique", ["poll_id", "account_id", "choice"])
    .execute();

  await db.schema
    .createTable("scheduled_statuses")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("scheduled_at", t.timestamp, (c) => c.notNull())
    .addColumn("params", "text", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("index_scheduled_statuses_on_scheduled_at")
    .on("scheduled_statuses")
    .column("scheduled_at")
    .execute();
  await db.schema
    .createIndex("index_scheduled_statuses_on_account_id")
    .on("scheduled_statuses")
    .column("account_id")
    .execute();
}

async function createCards(db: AnyDb, t: ColumnTypes): Promise<void> {
  await db.schema
    .createTable("preview_cards")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("url", "text", (c) => c.notNull().unique())
    .addColumn("title", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("description", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("type", "text", (c) => c.notNull().defaultTo("link"))
    .addColumn("author_name", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("author_url", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("provider_name", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("provider_url", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("html", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("width", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("height", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("image_file", "text")
    .addColumn("image_description", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("embed_url", "text", (c) => c.notNull().defaultTo(""))
    .addColumn("blurhash", "text")
    .addColumn("language", "text")
    .addColumn("published_at", t.timestamp)
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable("preview_cards_statuses")
    .addColumn("status_id", t.id, (c) => c.notNull().references("statuses.id").onDelete("cascade"))
    .addColumn("preview_card_id", t.id, (c) => c.notNull().references("preview_cards.id").onDelete("cascade"))
    .addColumn("url", "text")
    .addPrimaryKeyConstraint("preview_cards_statuses_pkey", ["status_id", "preview_card_id"])
    .execute();
}

export const statuses: RookeryMigration = {
  name: "0004_statuses",
  async up(db: AnyDb, engine: Engine) {
    const t = columnTypes(engine);
    await createGraph(db, t);
    await createStatusParts(db, t);
    await createMediaAndPolls(db, t);
    await createCards(db, t);
  },
};
