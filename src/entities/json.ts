/**
 * Integers that JSON must carry with every digit. IDs are 64-bit and exceed what a JavaScript
 * number holds; where Mastodon writes one as a JSON number (`params.application_id` of a
 * ScheduledStatus), `JSON.rawJSON` (Node 21+) writes the decimal text as it is.
 */
declare global {
  interface JSON {
    rawJSON(text: string): RawJsonValue;
  }
}

/** A value that JSON.stringify writes verbatim. */
export interface RawJsonValue {
  readonly rawJSON: string;
}

/** A decimal integer string written as a JSON number, every digit kept. */
export function jsonInteger(decimal: string): RawJsonValue {
  if (!/^-?\d+$/.test(decimal)) throw new TypeError(`Not a decimal integer: ${decimal}`);
  return JSON.rawJSON(decimal);
}
