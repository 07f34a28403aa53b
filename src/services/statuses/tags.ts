import { sql, type Kysely } from "kysely";
import { newId } from "../../db/ids.ts";
import { prepared } from "../../db/prepared.ts";
import type { Database, TagRow } from "../../db/schema.ts";

/** Slots `${prefix}0` … for a list of `length` values, and the values by slot. */
const listSlots = <S extends string>(prefix: string, values: readonly unknown[], slot: (name: S) => unknown) =>
  values.map((_, i) => slot(`${prefix}${i}` as S));
const listValues = (prefix: string, values: readonly unknown[]) =>
  Object.fromEntries(values.map((value, i) => [`${prefix}${i}`, value]));

/** The tags named `lower` (lowercase names); built once per number of names (db/prepared.ts). */
async function tagsNamed(db: Kysely<Database>, lower: readonly string[]): Promise<TagRow[]> {
  const query = prepared<string>(
    db,
    `tags.named.${lower.length}`,
    (slot) =>
      db
        .selectFrom("tags")
        .selectAll()
        .where((eb) => eb(eb.fn("lower", ["name"]), "in", listSlots("name", lower, slot) as string[])),
    listValues("name", lower),
  );
  return (await db.executeQuery<TagRow>(query)).rows;
}

/** Finds or creates the tags named (case-insensitively), keeping the casing first used. */
export async function upsertTags(db: Kysely<Database>, names: readonly string[]): Promise<TagRow[]> {
  if (names.length === 0) return [];
  const lower = [...new Set(names.map((n) => n.toLowerCase()))];
  const now = new Date().toISOString();
  const existing = await tagsNamed(db, lower);
  const known = new Set(existing.map((t) => t.name.toLowerCase()));
  const missing = names.filter(
    (n, i) => !known.has(n.toLowerCase()) && names.findIndex((m) => m.toLowerCase() === n.toLowerCase()) === i,
  );
  for (const name of missing) {
    await db
      .insertInto("tags")
      .values({ id: newId(), name, created_at: now, updated_at: now })
      .onConflict((oc) => oc.expression(sql`lower(name)`).doNothing())
      .execute();
  }
  return missing.length === 0 ? existing : tagsNamed(db, lower);
}

/** Links a status to its tags and notes when each tag was last used. */
export async function tagStatus(
  db: Kysely<Database>,
  statusId: string,
  tags: readonly TagRow[],
  at: string,
): Promise<void> {
  if (tags.length === 0) return;
  // Built once per number of tags (db/prepared.ts): they run for every post.
  const ids = tags.map((t) => t.id);
  await db.executeQuery(
    prepared<string>(
      db,
      `tags.link.${ids.length}`,
      (slot) =>
        db
          .insertInto("statuses_tags")
          .values(
            listSlots("tag", ids, slot).map((tag) => ({ status_id: slot("status") as string, tag_id: tag as string })),
          )
          .onConflict((oc) => oc.doNothing()),
      { status: statusId, ...listValues("tag", ids) },
    ),
  );
  await db.executeQuery(
    prepared<string>(
      db,
      `tags.used.${ids.length}`,
      (slot) =>
        db
          .updateTable("tags")
          .set({ last_status_at: slot("at") as string, updated_at: slot("at") as string })
          .where("id", "in", listSlots("tag", ids, slot) as string[]),
      { at, ...listValues("tag", ids) },
    ),
  );
}
