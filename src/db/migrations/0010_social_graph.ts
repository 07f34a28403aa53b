import { sql, type CreateTableBuilder, type Kysely } from "kysely";
import { columnTypes, type ColumnTypes, type Engine, type RookeryMigration } from "./types.ts";

// deno-lint-ignore no-explicit-any
type AnyDb = Kysely<any>;
// deno-lint-ignore no-explicit-any
type Table = CreateTableBuilder<any, any>;

function flag(table: Table, t: ColumnTypes, name: string, fallback: boolean): Table {
  return table.addColumn(name, t.boolean, (c) => c.notNull().defaultTo(sql.raw(fallback ? t.true : t.false)));
}

/** A row from one account about another (mutes, requests, endorsements, notes), unique per pair. */
function accountPair(db: AnyDb, t: ColumnTypes, name: string): Table {
  return db.schema
    .createTable(name)
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("target_account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addUniqueConstraint(`${name}_account_target_unique`, ["account_id", "target_account_id"]);
}

async function createAccountRelations(db: AnyDb, t: ColumnTypes): Promise<void> {
  let mutes = accountPair(db, t, "mutes");
  mutes = flag(mutes, t, "hide_notifications", true);
  await mutes
    .addColumn("expires_at", t.timestamp)
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex("index_mutes_on_target_account_id").on("mutes").column("target_account_id").execute();
  await db.schema.createIndex("index_mutes_on_expires_at").on("mutes").column("expires_at").execute();

  let requests = accountPair(db, t, "follow_requests");
  requests = flag(requests, t, "show_reblogs", true);
  requests = flag(requests, t, "notify", false);
  await requests
    .addColumn("languages", "text")
    .addColumn("uri", "text")
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  // A locked account's pending requests, newest first.
  await db.schema
    .createIndex("index_follow_requests_on_target_account_id_and_id")
    .on("follow_requests")
    .columns(["target_account_id", "id"])
    .execute();

  await accountPair(db, t, "account_pins")
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("index_account_pins_on_target_account_id")
    .on("account_pins")
    .column("target_account_id")
    .execute();

  await accountPair(db, t, "account_notes")
    .addColumn("comment", "text", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable("account_domain_blocks")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("domain", "text", (c) => c.notNull())
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addUniqueConstraint("account_domain_blocks_account_domain_unique", ["account_id", "domain"])
    .execute();

  await accountPair(db, t, "follow_recommendation_suppressions")
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .execute();

  // Paging the follows of an account and its followers, newest first (followers/following lists).
  await db.schema
    .createIndex("index_follows_on_account_id_and_id")
    .on("follows")
    .columns(["account_id", "id"])
    .execute();
  await db.schema
    .createIndex("index_follows_on_target_account_id_and_id")
    .on("follows")
    .columns(["target_account_id", "id"])
    .execute();
  await db.schema.createIndex("index_blocks_on_account_id_and_id").on("blocks").columns(["account_id", "id"]).execute();
}

async function createListsAndTags(db: AnyDb, t: ColumnTypes): Promise<void> {
  let lists = db.schema
    .createTable("lists")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("title", "text", (c) => c.notNull())
    .addColumn("replies_policy", "text", (c) => c.notNull().defaultTo("list"));
  lists = flag(lists, t, "exclusive", false);
  await lists
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addColumn("updated_at", t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex("index_lists_on_account_id").on("lists").column("account_id").execute();

  await db.schema
    .createTable("list_accounts")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("list_id", t.id, (c) => c.notNull().references("lists.id").onDelete("cascade"))
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addUniqueConstraint("list_accounts_list_account_unique", ["list_id", "account_id"])
    .execute();
  await db.schema.createIndex("index_list_accounts_on_account_id").on("list_accounts").column("account_id").execute();

  await db.schema
    .createTable("tag_follows")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("tag_id", t.id, (c) => c.notNull().references("tags.id").onDelete("cascade"))
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addUniqueConstraint("tag_follows_account_tag_unique", ["account_id", "tag_id"])
    .execute();
  await db.schema.createIndex("index_tag_follows_on_tag_id").on("tag_follows").column("tag_id").execute();

  await db.schema
    .createTable("featured_tags")
    .addColumn("id", t.id, (c) => c.primaryKey())
    .addColumn("account_id", t.id, (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("tag_id", t.id, (c) => c.notNull().references("tags.id").onDelete("cascade"))
    .addColumn("created_at", t.timestamp, (c) => c.notNull())
    .addUniqueConstraint("featured_tags_account_tag_unique", ["account_id", "tag_id"])
    .execute();
}

/**
 * The social graph beyond follows and blocks: mutes (with expiry), follow requests, endorsements,
 * private notes, user-level domain blocks, dismissed suggestions, lists, followed and featured tags.
 */
export const socialGraph: RookeryMigration = {
  name: "0010_social_graph",
  async up(db: AnyDb, engine: Engine) {
    const t = columnTypes(engine);
    await createAccountRelations(db, t);
    await createListsAndTags(db, t);
  },
};
