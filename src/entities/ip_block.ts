import type { IpBlockRow } from "../db/schema.ts";

/** The Admin::IpBlock entity (Mastodon's REST::Admin::IpBlockSerializer). */
export interface AdminIpBlockJson {
  id: string;
  /** CIDR: `192.0.2.0/24`, `203.0.113.7/32`. */
  ip: string;
  severity: IpBlockRow["severity"];
  comment: string;
  created_at: string;
  expires_at: string | null;
}

export function serializeAdminIpBlock(row: IpBlockRow): AdminIpBlockJson {
  return {
    id: row.id,
    ip: row.ip,
    severity: row.severity,
    comment: row.comment,
    created_at: row.created_at,
    expires_at: row.expires_at,
  };
}
