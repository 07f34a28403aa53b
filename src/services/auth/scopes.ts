/** Scopes an application may register and a token may carry (Mastodon 4.6, without collections). */
export const READ_SCOPES = [
  "read:accounts",
  "read:blocks",
  "read:bookmarks",
  "read:favourites",
  "read:filters",
  "read:follows",
  "read:lists",
  "read:mutes",
  "read:notifications",
  "read:search",
  "read:statuses",
] as const;
export const WRITE_SCOPES = [
  "write:accounts",
  "write:blocks",
  "write:bookmarks",
  "write:conversations",
  "write:favourites",
  "write:filters",
  "write:follows",
  "write:lists",
  "write:media",
  "write:mutes",
  "write:notifications",
  "write:reports",
  "write:statuses",
] as const;
const ADMIN_SUBJECTS = [
  "accounts",
  "reports",
  "domain_allows",
  "domain_blocks",
  "ip_blocks",
  "email_domain_blocks",
  "canonical_email_blocks",
];
export const ADMIN_SCOPES = [
  "admin:read",
  "admin:write",
  ...ADMIN_SUBJECTS.map((s) => `admin:read:${s}`),
  ...ADMIN_SUBJECTS.map((s) => `admin:write:${s}`),
];

/** Default scope first, then every optional one, as `scopes_supported` lists them. */
export const ALL_SCOPES: readonly string[] = [
  "read",
  "write",
  "push",
  "follow",
  "profile",
  ...READ_SCOPES,
  ...WRITE_SCOPES,
  ...ADMIN_SCOPES,
];
const KNOWN = new Set(ALL_SCOPES);

export function parseScopes(text: string | undefined): string[] {
  return (text ?? "").split(/[\s+]+/).filter(Boolean);
}

export function isKnownScope(scope: string): boolean {
  return KNOWN.has(scope);
}

/**
 * The scope that covers `scope` from above: `read:statuses` → `read`, `admin:write:accounts` →
 * `admin:write`. Top-level scopes have none.
 */
export function parentScope(scope: string): string | undefined {
  const cut = scope.lastIndexOf(":");
  return cut === -1 ? undefined : scope.slice(0, cut);
}

/**
 * Whether a token with `granted` scopes may call an endpoint that accepts `accepted`: it holds one
 * of them or a scope above one of them. `follow` counts only where an endpoint lists it.
 */
export function scopesAllow(granted: readonly string[], accepted: readonly string[]): boolean {
  for (const scope of accepted) {
    for (let s: string | undefined = scope; s; s = parentScope(s)) {
      if (granted.includes(s)) return true;
    }
  }
  return false;
}
