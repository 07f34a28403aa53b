/** A local status's own addresses, and whether its text links somewhere worth a preview card. */
import { extractEntities } from "../../text/entities.ts";

export function localStatusUris(baseUrl: string, username: string, id: string): { uri: string; url: string } {
  return { uri: `${baseUrl}/users/${username}/statuses/${id}`, url: `${baseUrl}/@${username}/${id}` };
}

/** Public and unlisted posts with a link get a preview card, fetched in the background. */
export function hasPreviewableLink(visibility: string, text: string): boolean {
  if (visibility !== "public" && visibility !== "unlisted") return false;
  return extractEntities(text).some((e) => e.kind === "url" && /^https?:/i.test(e.url));
}
