import type { ApplicationRow } from "../db/schema.ts";
import { scopeList } from "../db/columns.ts";

/**
 * The public view of an application (GET /api/v1/apps/verify_credentials), with the server's VAPID
 * key clients subscribe to Web Push with (`vapid_key`, deprecated by Mastodon 4.3 but still sent).
 */
export function serializeApplication(row: ApplicationRow, vapidKey: string) {
  const redirectUris = row.redirect_uri.split("\n").filter(Boolean);
  return {
    id: row.id,
    name: row.name,
    website: row.website || null,
    scopes: scopeList(row),
    redirect_uris: redirectUris,
    vapid_key: vapidKey,
    redirect_uri: redirectUris.join("\n"),
  };
}

/** The application with its credentials, answered once, to the client that registered it. */
export function serializeCredentialApplication(row: ApplicationRow, vapidKey: string) {
  return {
    ...serializeApplication(row, vapidKey),
    client_id: row.client_id,
    client_secret: row.client_secret,
    client_secret_expires_at: 0,
  };
}
