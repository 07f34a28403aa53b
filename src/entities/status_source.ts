import type { StatusRow } from "../db/schema.ts";

/** StatusSource: what the author typed, for editing. */
export interface StatusSource {
  id: string;
  text: string;
  spoiler_text: string;
}

export function serializeStatusSource(status: Pick<StatusRow, "id" | "text" | "spoiler_text">): StatusSource {
  return { id: status.id, text: status.text, spoiler_text: status.spoiler_text };
}
