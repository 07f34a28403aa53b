/**
 * Recognition of links, mentions and hashtags in plain text, as Mastodon recognises them
 * (reference/behaviour.md §4). Positions are in UTF-16 code units of the original text.
 */

export type TextEntity =
  | { kind: "url"; start: number; end: number; url: string }
  | { kind: "mention"; start: number; end: number; username: string; domain: string | null }
  | { kind: "hashtag"; start: number; end: number; name: string };

/** Schemes whose URLs are linked and count as 23 characters. */
const COUNTED_SCHEMES = "https?|dat|dweb|ipfs|ipns|ssb|gopher|gemini";

const URL_RE = new RegExp(
  `(?<![\\p{L}\\p{N}_/@.-])(?:(?:${COUNTED_SCHEMES}):\\/\\/[^\\s<>"]+|(?:xmpp|magnet):[^\\s<>"]+)`,
  "giu",
);
const USERNAME = "[a-z0-9_]+(?:[.-]+[a-z0-9_]+)*";
const MENTION_RE = new RegExp(
  // A domain may carry a port (servers on development or test ports: `@bob@localhost:3000`).
  `(?<![=/\\p{L}\\p{N}_])@(${USERNAME})(?:@([\\p{L}\\p{N}_]+(?:[.-]+[\\p{L}\\p{N}_]+)*(?::\\d{1,5}(?![\\d:]))?))?`,
  "giu",
);
const HASHTAG_CHARS = "\\p{L}\\p{M}\\p{N}_·・\\u200c";
const HASHTAG_RE = new RegExp(`(?<![=/)\\p{L}\\p{N}])[#＃]([${HASHTAG_CHARS}]+)`, "gu");

/** Drops trailing punctuation that ends a sentence rather than the URL; keeps balanced parentheses. Linear. */
function trimUrl(candidate: string): string {
  let opens = 0;
  let closes = 0;
  for (const c of candidate) {
    if (c === "(") opens++;
    else if (c === ")") closes++;
  }
  const hasBracket = candidate.includes("[");
  let end = candidate.length;
  while (end > 0) {
    const last = candidate[end - 1];
    if (".,;:!?'\"*".includes(last)) {
      end--;
    } else if (last === ")" && opens < closes) {
      closes--;
      end--;
    } else if (last === "]" && !hasBracket) {
      end--;
    } else {
      break;
    }
  }
  return candidate.slice(0, end);
}

function isValidUrl(url: string): boolean {
  try {
    new URL(url);
    return true;
  } catch {
    return false;
  }
}

/** All links, mentions and hashtags, in order and without overlaps (links win). */
export function extractEntities(text: string): TextEntity[] {
  const entities: TextEntity[] = [];
  for (const match of text.matchAll(URL_RE)) {
    const url = trimUrl(match[0]);
    if (url.length > 0 && isValidUrl(url))
      entities.push({ kind: "url", start: match.index, end: match.index + url.length, url });
  }
  // URLs were found in order and do not overlap each other: a binary search finds a clash.
  const urls = entities.slice();
  const overlaps = (start: number, end: number) => {
    let low = 0;
    let high = urls.length - 1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      if (urls[mid].end <= start) low = mid + 1;
      else if (urls[mid].start >= end) high = mid - 1;
      else return true;
    }
    return false;
  };
  for (const match of text.matchAll(MENTION_RE)) {
    let end = match.index + match[0].length;
    let domain = match[2] ?? null;
    // A sentence-ending dot after the domain is not part of it.
    if (domain?.endsWith(".")) {
      domain = domain.replace(/\.+$/, "");
      end = match.index + 1 + match[1].length + 1 + domain.length;
    }
    if (!overlaps(match.index, end))
      entities.push({
        kind: "mention",
        start: match.index,
        end,
        username: match[1],
        domain: domain ? domain.toLowerCase() : null,
      });
  }
  for (const match of text.matchAll(HASHTAG_RE)) {
    const name = match[1].replace(/[·・\u200c]+$/, "");
    if (!/\p{L}/u.test(name)) continue;
    const end = match.index + 1 + name.length;
    if (!overlaps(match.index, end)) entities.push({ kind: "hashtag", start: match.index, end, name });
  }
  return entities.sort((a, b) => a.start - b.start);
}

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** Grapheme clusters: an emoji ZWJ sequence counts as one. */
export function graphemeLength(text: string): number {
  let n = 0;
  for (const _ of segmenter.segment(text)) n++;
  return n;
}

/**
 * Mastodon's status length: URLs with a counted scheme are 23 characters, a remote mention counts
 * only `@username`, everything else counts in grapheme clusters.
 */
export function countedLength(text: string, charactersPerUrl = 23): number {
  let out = "";
  let at = 0;
  for (const entity of extractEntities(text)) {
    out += text.slice(at, entity.start);
    if (entity.kind === "url" && !/^(xmpp|magnet):/i.test(entity.url)) out += "x".repeat(charactersPerUrl);
    else if (entity.kind === "mention" && entity.domain) out += `@${entity.username}`;
    else out += text.slice(entity.start, entity.end);
    at = entity.end;
  }
  return graphemeLength(out + text.slice(at));
}
