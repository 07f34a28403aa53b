import type { DomainBlockRow } from "../db/schema.ts";
import { createHash } from "node:crypto";

/** SHA-256 of the domain, hex: lets anyone check a domain against an obfuscated list. */
const domainDigest = (domain: string) => createHash("sha256").update(domain).digest("hex");

/** The Admin::DomainBlock entity. */
export interface AdminDomainBlockJson {
  id: string;
  domain: string;
  digest: string;
  created_at: string;
  severity: string;
  reject_media: boolean;
  reject_reports: boolean;
  private_comment: string | null;
  public_comment: string | null;
  obfuscate: boolean;
}

/** A blocked server as the public list shows it. */
export interface PublicDomainBlockJson {
  domain: string;
  digest: string;
  severity: string;
  comment?: string;
}

export function serializeAdminDomainBlock(row: DomainBlockRow): AdminDomainBlockJson {
  return {
    id: row.id,
    domain: row.domain,
    digest: domainDigest(row.domain),
    created_at: row.created_at,
    severity: row.severity,
    reject_media: row.reject_media,
    reject_reports: row.reject_reports,
    private_comment: row.private_comment,
    public_comment: row.public_comment,
    obfuscate: row.obfuscate,
  };
}

/**
 * Mastodon's obfuscation: the first and last quarter of the characters stay, dots stay, the rest
 * becomes `*` (`example.com` → `exa****.*om`).
 */
export function obfuscateDomain(domain: string): string {
  const chars = [...domain];
  const visible = Math.floor(chars.length / 4);
  return chars.map((c, i) => (i > visible && i < chars.length - visible && c !== "." ? "*" : c)).join("");
}

export function serializePublicDomainBlock(row: DomainBlockRow, withComment: boolean): PublicDomainBlockJson {
  const json: PublicDomainBlockJson = {
    domain: row.obfuscate ? obfuscateDomain(row.domain) : row.domain,
    digest: domainDigest(row.domain),
    severity: row.severity,
  };
  if (withComment) json.comment = row.public_comment ?? "";
  return json;
}
