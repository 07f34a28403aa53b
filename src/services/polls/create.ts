import type { Kysely } from "kysely";
import { newId } from "../../db/ids.ts";
import type { Database, PollRow } from "../../db/schema.ts";
import type { PollParams } from "../statuses/validate.ts";

/** Stores a new poll for a status (already validated); every tally starts at zero. */
export async function insertPoll(
  db: Kysely<Database>,
  accountId: string,
  statusId: string,
  poll: PollParams,
  now: Date,
): Promise<PollRow> {
  const options = poll.options.map((o) => o.trim());
  return db
    .insertInto("polls")
    .values({
      id: newId(),
      account_id: accountId,
      status_id: statusId,
      expires_at: new Date(now.getTime() + (poll.expiresIn ?? 0) * 1000).toISOString(),
      options: JSON.stringify(options),
      cached_tallies: JSON.stringify(options.map(() => 0)),
      multiple: poll.multiple,
      hide_totals: poll.hideTotals,
      votes_count: 0,
      voters_count: 0,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}
