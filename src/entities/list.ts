import type { ListRow } from "../db/schema.ts";

/** List: a user's group of accounts. */
export interface List {
  id: string;
  title: string;
  replies_policy: string;
  exclusive: boolean;
}

export function serializeList(row: ListRow): List {
  return { id: row.id, title: row.title, replies_policy: row.replies_policy, exclusive: row.exclusive };
}
