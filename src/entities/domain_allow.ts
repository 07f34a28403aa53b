import type { DomainAllowRow } from "../db/schema.ts";

/** The Admin::DomainAllow entity (Mastodon's REST::Admin::DomainAllowSerializer). */
export interface AdminDomainAllowJson {
  id: string;
  domain: string;
  created_at: string;
}

export function serializeAdminDomainAllow(row: DomainAllowRow): AdminDomainAllowJson {
  return { id: row.id, domain: row.domain, created_at: row.created_at };
}
