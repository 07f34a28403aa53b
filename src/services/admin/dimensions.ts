/**
 * The admin dashboard's dimensions (Mastodon's Admin::Metrics::Dimension): the largest shares of
 * something over a window of days, `limit` of them, largest first.
 * - languages: interface languages of the users seen in the window (Mastodon: signed in).
 * - sources: the apps users signed up with (`web` for the website).
 * - servers: servers whose accounts posted in the window (this one by its domain).
 * - space_usage: the database's size and the media files' bytes. Rookery keeps no size of avatars,
 *   headers, emoji or card images, and Redis (when used) is not asked: they are left out.
 * - software_versions: the Mastodon API version answered (`mastodon`), Rookery, Node.js, and the
 *   database engine.
 * - tag_servers, tag_languages (`{id}`): servers and languages of the posts with a hashtag.
 * - instance_accounts (`{domain}`): a server's accounts with the most followers here.
 * - instance_languages (`{domain}`): the languages of a server's posts in the window.
 */
import { sql } from "kysely";
import type { Ctx } from "../../context.ts";
import { MASTODON_COMPATIBLE_VERSION, ROOKERY_VERSION } from "../../version.ts";
import { humanSize } from "./measures.ts";
import { dayString, domainOf, idRange, languageName, tagIdOf, type Period } from "./metrics_period.ts";

export const DIMENSION_KEYS = [
  "languages",
  "sources",
  "servers",
  "space_usage",
  "software_versions",
  "tag_servers",
  "tag_languages",
  "instance_accounts",
  "instance_languages",
] as const;
export type DimensionKey = (typeof DIMENSION_KEYS)[number];

export interface DimensionParams {
  id?: string;
  domain?: string;
}

export interface DimensionItem {
  key: string;
  human_key: string;
  value: string;
  unit?: string;
  human_value?: string;
}

export interface Dimension {
  key: DimensionKey;
  data: DimensionItem[];
}

/** The dimensions named in `keys` (unknown keys are left out). */
export async function dimensions(
  ctx: Ctx,
  keys: readonly string[],
  period: Period,
  limit: number,
  params: Readonly<Record<string, DimensionParams | undefined>>,
): Promise<Dimension[]> {
  const known = [...new Set(keys)].filter((k): k is DimensionKey => (DIMENSION_KEYS as readonly string[]).includes(k));
  const results: Dimension[] = [];
  for (const key of known)
    results.push({ key, data: limit > 0 ? await dimension(ctx, key, period, limit, params[key]) : [] });
  return results;
}

const item = (key: string, human: string, value: unknown): DimensionItem => ({
  key,
  human_key: human,
  value: String(Number(value ?? 0)),
});

async function dimension(
  ctx: Ctx,
  key: DimensionKey,
  period: Period,
  limit: number,
  params: DimensionParams | undefined,
): Promise<DimensionItem[]> {
  const db = ctx.db.kysely;
  const [lo, hi] = idRange(period);
  const local = ctx.config.localDomain;
  switch (key) {
    case "languages": {
      const rows = await db
        .selectFrom("user_activity_days as d")
        .innerJoin("users as u", "u.id", "d.user_id")
        .select(["u.locale", sql<number>`count(distinct u.id)`.as("n")])
        .where("d.day", ">=", dayString(period.start))
        .where("d.day", "<=", dayString(period.end))
        .where("u.locale", "is not", null)
        .groupBy("u.locale")
        .orderBy("n", "desc")
        .orderBy("u.locale")
        .limit(limit)
        .execute();
      return rows.map((r) => item(r.locale!, languageName(r.locale!), r.n));
    }
    case "sources": {
      const rows = await db
        .selectFrom("users as u")
        .leftJoin("oauth_applications as app", "app.id", "u.created_by_application_id")
        .select(["app.name", (eb) => eb.fn.countAll().as("n")])
        .where("u.id", ">=", lo)
        .where("u.id", "<", hi)
        .groupBy("app.name")
        .orderBy("n", "desc")
        .limit(limit)
        .execute();
      return rows.map((r) => item(r.name ?? "web", r.name ?? "Website", r.n));
    }
    case "servers": {
      const rows = await db
        .selectFrom("statuses as s")
        .innerJoin("accounts as a", "a.id", "s.account_id")
        .select(["a.domain", (eb) => eb.fn.countAll().as("n")])
        .where("s.id", ">=", lo)
        .where("s.id", "<", hi)
        .groupBy("a.domain")
        .orderBy("n", "desc")
        .limit(limit)
        .execute();
      return rows.map((r) => item(r.domain ?? local, r.domain ?? local, r.n));
    }
    case "space_usage":
      return spaceUsage(ctx);
    case "software_versions":
      return softwareVersions(ctx);
    case "tag_servers":
    case "tag_languages": {
      const tagId = await tagIdOf(ctx, key, params);
      const base = db
        .selectFrom("statuses_tags as st")
        .innerJoin("statuses as s", "s.id", "st.status_id")
        .where("st.tag_id", "=", tagId)
        .where("st.status_id", ">=", lo)
        .where("st.status_id", "<", hi)
        .where("s.deleted_at", "is", null);
      if (key === "tag_servers") {
        const rows = await base
          .innerJoin("accounts as a", "a.id", "s.account_id")
          .select(["a.domain", (eb) => eb.fn.countAll().as("n")])
          .groupBy("a.domain")
          .orderBy("n", "desc")
          .limit(limit)
          .execute();
        return rows.map((r) => item(r.domain ?? local, r.domain ?? local, r.n));
      }
      const language = sql<string>`coalesce(s.language, 'und')`;
      const rows = await base
        .select([language.as("language"), (eb) => eb.fn.countAll().as("n")])
        .groupBy(language)
        .orderBy("n", "desc")
        .limit(limit)
        .execute();
      return rows.map((r) => item(r.language, languageName(r.language), r.n));
    }
    case "instance_accounts": {
      const domain = domainOf(key, params);
      const rows = await db
        .selectFrom("accounts as a")
        .leftJoin("follows as f", "f.target_account_id", "a.id")
        .select(["a.id", "a.username", (eb) => eb.fn.count("f.id").as("n")])
        .where("a.domain", "=", domain)
        .groupBy(["a.id", "a.username"])
        .orderBy("n", "desc")
        .orderBy("a.id")
        .limit(limit)
        .execute();
      return rows.map((r) => item(r.username, r.username, r.n));
    }
    case "instance_languages": {
      const domain = domainOf(key, params);
      const language = sql<string>`coalesce(s.language, 'und')`;
      const rows = await db
        .selectFrom("accounts as a")
        .innerJoin("statuses as s", "s.account_id", "a.id")
        .select([language.as("language"), (eb) => eb.fn.countAll().as("n")])
        .where("a.domain", "=", domain)
        .where("s.id", ">=", lo)
        .where("s.id", "<", hi)
        .where("s.reblog_of_id", "is", null)
        .where("s.deleted_at", "is", null)
        .groupBy(language)
        .orderBy("n", "desc")
        .limit(limit)
        .execute();
      return rows.map((r) => item(r.language, languageName(r.language), r.n));
    }
  }
}

const bytes = (key: string, human: string, value: number): DimensionItem => ({
  key,
  human_key: human,
  value: String(value),
  unit: "bytes",
  human_value: humanSize(value),
});

async function spaceUsage(ctx: Ctx): Promise<DimensionItem[]> {
  const db = ctx.db.kysely;
  const postgres = ctx.db.engine === "postgres";
  const size = postgres
    ? await sql<{ n: number | string }>`SELECT pg_database_size(current_database()) AS n`.execute(db)
    : await sql<{
        n: number | string;
      }>`SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()`.execute(db);
  // The one sum over a whole table here, as Mastodon's: media bytes are not counted anywhere else.
  const media = await db
    .selectFrom("media_attachments")
    .select(sql<number>`coalesce(sum(file_size), 0)`.as("n"))
    .executeTakeFirstOrThrow();
  return [
    postgres
      ? bytes("postgresql", "PostgreSQL", Number(size.rows[0]?.n ?? 0))
      : bytes("sqlite", "SQLite", Number(size.rows[0]?.n ?? 0)),
    bytes("media", "Media storage", Number(media.n ?? 0)),
  ];
}

async function softwareVersions(ctx: Ctx): Promise<DimensionItem[]> {
  const postgres = ctx.db.engine === "postgres";
  const version = postgres
    ? await sql<{ v: string }>`SELECT current_setting('server_version') AS v`.execute(ctx.db.kysely)
    : await sql<{ v: string }>`SELECT sqlite_version() AS v`.execute(ctx.db.kysely);
  const database = String(version.rows[0]?.v ?? "").split(" ")[0];
  const entry = (key: string, human: string, value: string): DimensionItem => ({
    key,
    human_key: human,
    value,
    human_value: value,
  });
  return [
    entry("mastodon", "Mastodon API", MASTODON_COMPATIBLE_VERSION),
    entry("rookery", "Rookery", ROOKERY_VERSION),
    entry("nodejs", "Node.js", process.versions.node),
    postgres ? entry("postgresql", "PostgreSQL", database) : entry("sqlite", "SQLite", database),
  ];
}
