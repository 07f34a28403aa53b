import type { EmailDomainBlockRow } from "../db/schema.ts";

/** One day of Admin::EmailDomainBlock's `history`; Mastodon writes the numbers as strings. */
export interface AdminEmailDomainBlockHistoryJson {
  day: string;
  accounts: string;
  uses: string;
}

/** The Admin::EmailDomainBlock entity (Mastodon's REST::Admin::EmailDomainBlockSerializer). */
export interface AdminEmailDomainBlockJson {
  id: string;
  domain: string;
  created_at: string;
  history: AdminEmailDomainBlockHistoryJson[];
}

/** What the entity is made of: the row and its days, today first (services/admin/email_domain_blocks.ts). */
export interface EmailDomainBlockWithHistory {
  row: EmailDomainBlockRow;
  history: ReadonlyArray<{ day: number; accounts: number; uses: number }>;
}

export function serializeAdminEmailDomainBlock({
  row,
  history,
}: EmailDomainBlockWithHistory): AdminEmailDomainBlockJson {
  return {
    id: row.id,
    domain: row.domain,
    created_at: row.created_at,
    history: history.map((d) => ({ day: String(d.day), accounts: String(d.accounts), uses: String(d.uses) })),
  };
}
