import { sql, type Kysely } from "kysely";
import { newId } from "../../db/ids.ts";
import type { Database, TagRow } from "../../db/schema.ts";

/** Finds or creates the tags named (case-insensitively), keeping the casing first used. */
export async function upsertTags(db: Kysely<Database>, names: readonly string[]): Promise<TagRow[]> {
  if (names.length === 0) return [];
  const lower = [...new Set(names.map((n) => n.toLowerCase()))];
  const now = new Date().toISOString();
  const existing = await db
    .selectFrom("tags")
    .selectAll()
    .where((eb) => eb(eb.fn("lower", ["name"]), "in", lower))
    .execute();
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
  return missing.length === 0
    ? existing
    : db
        .selectFrom("tags")
        .selectAll()
        .where((eb) => eb(eb.fn("lower", ["name"]), "in", lower))
        .execute();
}

/** Links a status to its tags and notes when each tag was last used. */
export async function tagStatus(
  db: Kysely<Database>,
  statusId: string,
  tags: readonly TagRow[],
  at: string,
): Promise<void> {
  if (tags.length === 0) return;
  await db
    .insertInto("statuses_tags")
    .values(tags.map((t) => ({ status_id: statusId, tag_id: t.id })))
    .onConflict((oc) => oc.doNothing())
    .execute();
  await db
    .updateTable("tags")
    .set({ last_status_at: at, updated_at: at })
    .where(
      "id",
      "in",
      tags.map((t) => t.id),
    )
    .execute();
}
