import { Parser } from "htmlparser2";
import { escapeHtml } from "../../text/escape.ts";

/*
 * HTML on its way to a provider and back. Outgoing, custom emoji shortcodes and hashtags are marked
 * `translate="no"` so they survive; incoming, the provider's HTML is untrusted and goes through
 * Mastodon's strict allowlist (the elements and attributes status content may hold) before any
 * client sees it.
 */

/** Elements kept, with the attributes each may carry besides `lang`. */
const ALLOWED: Record<string, readonly string[]> = {
  p: ["class"],
  br: [],
  span: ["class", "translate"],
  a: ["href", "rel", "class", "translate", "target"],
  del: [],
  s: [],
  pre: [],
  blockquote: [],
  code: [],
  b: [],
  strong: [],
  u: [],
  i: [],
  em: [],
  ul: [],
  ol: ["start", "reversed"],
  li: ["value"],
  ruby: [],
  rt: [],
  rp: [],
};
/** Elements removed together with everything inside them. */
const DROPPED_WITH_CONTENT = new Set([
  "script",
  "style",
  "iframe",
  "noembed",
  "noframes",
  "noscript",
  "plaintext",
  "template",
  "svg",
  "math",
  "xmp",
  "textarea",
  "select",
  "object",
  "title",
]);
const VOID = new Set([
  "br",
  "img",
  "hr",
  "input",
  "meta",
  "link",
  "area",
  "base",
  "col",
  "embed",
  "source",
  "track",
  "wbr",
  "param",
]);
const LINK_SCHEMES = new Set([
  "http",
  "https",
  "dat",
  "dweb",
  "ipfs",
  "ipns",
  "ssb",
  "gopher",
  "xmpp",
  "magnet",
  "gemini",
]);
const CLASS_NAMES = new Set(["mention", "hashtag", "ellipsis", "invisible", "quote-inline"]);
const REL_WORDS = new Set(["nofollow", "noopener", "noreferrer", "tag", "me", "ugc"]);
/** Custom emoji shortcodes (`:blobcat:`), which providers must leave alone. */
const SHORTCODE = /:[a-zA-Z0-9_]{2,}:/g;

function keptClass(value: string): string {
  return value
    .split(/[\t\n\f\r ]+/)
    .filter((name) => /^(?:h|p|u|dt|e)-/.test(name) || CLASS_NAMES.has(name))
    .join(" ");
}

function safeHref(value: string): string | undefined {
  // Browsers ignore control characters and spaces inside a scheme (`java\tscript:`).
  const squeezed = [...value].filter((c) => c.charCodeAt(0) > 0x20).join("");
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(squeezed)?.[1];
  return scheme && LINK_SCHEMES.has(scheme.toLowerCase()) ? value : undefined;
}

/** The allowed attributes of an allowed element, cleaned; undefined values are dropped. */
function cleanAttributes(name: string, attribs: Record<string, string>): Array<[string, string]> {
  const allowed = ALLOWED[name];
  const out: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(attribs)) {
    let kept: string | undefined;
    if (key === "lang") kept = /^[a-zA-Z]{2,3}(?:-[a-zA-Z0-9]{1,8})*$/.test(value) ? value : undefined;
    else if (!allowed.includes(key)) kept = undefined;
    else if (key === "class") kept = keptClass(value);
    else if (key === "href") kept = safeHref(value);
    else if (key === "translate") kept = value === "no" ? value : undefined;
    else if (key === "target") kept = value === "_blank" ? value : undefined;
    else if (key === "rel")
      kept =
        value
          .split(/\s+/)
          .filter((word) => REL_WORDS.has(word.toLowerCase()))
          .join(" ") || undefined;
    else if (key === "start" || key === "value") kept = /^-?\d{1,9}$/.test(value) ? value : undefined;
    else if (key === "reversed") kept = "";
    if (kept !== undefined) out.push([key, kept]);
  }
  // A link opening a new tab must not hand the opener to the page it opens.
  if (name === "a" && out.some(([key]) => key === "target")) {
    const rel = out.find(([key]) => key === "rel");
    if (!rel) out.push(["rel", "noopener"]);
    else if (!rel[1].split(" ").includes("noopener")) rel[1] = `${rel[1]} noopener`;
  }
  return out;
}

interface Open {
  name: string;
  /** False for elements dropped or unwrapped: their close tag is not written either. */
  written: boolean;
  /** Inside an element marked `translate="no"`. */
  untranslated: boolean;
}

type Mode = "outgoing" | "incoming";

function rewrite(html: string, mode: Mode): string {
  let out = "";
  const stack: Open[] = [];
  let dropDepth = 0;
  const untranslated = () => stack.length > 0 && stack[stack.length - 1].untranslated;

  const parser = new Parser(
    {
      onopentag(name, attribs) {
        if (DROPPED_WITH_CONTENT.has(name)) {
          dropDepth++;
          return;
        }
        if (dropDepth > 0 || VOID.has(name)) {
          if (dropDepth === 0 && name === "br") out += "<br />";
          return;
        }
        if (!(name in ALLOWED)) {
          stack.push({ name, written: false, untranslated: untranslated() });
          return;
        }
        const attributes = cleanAttributes(name, attribs);
        if (
          mode === "outgoing" &&
          name === "a" &&
          attribs.class?.split(/\s+/).includes("hashtag") &&
          !attributes.some(([key]) => key === "translate")
        ) {
          attributes.push(["translate", "no"]);
        }
        const marked = attributes.some(([key, value]) => key === "translate" && value === "no");
        // Incoming, the bare spans that protected emoji shortcodes are unwrapped again.
        const unwrap = mode === "incoming" && name === "span" && attributes.length === 1 && marked;
        stack.push({ name, written: !unwrap, untranslated: untranslated() || marked });
        if (!unwrap) out += `<${name}${attributes.map(([key, value]) => ` ${key}="${escapeHtml(value)}"`).join("")}>`;
      },
      ontext(text) {
        if (dropDepth > 0) return;
        const escaped = escapeHtml(text);
        out +=
          mode === "outgoing" && !untranslated()
            ? escaped.replace(SHORTCODE, (code) => `<span translate="no">${code}</span>`)
            : escaped;
      },
      onclosetag(name) {
        if (DROPPED_WITH_CONTENT.has(name)) {
          dropDepth = Math.max(0, dropDepth - 1);
          return;
        }
        if (dropDepth > 0 || VOID.has(name)) return;
        const at = stack.map((open) => open.name).lastIndexOf(name);
        if (at === -1) return;
        while (stack.length > at) {
          const open = stack.pop()!;
          if (open.written) out += `</${open.name}>`;
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  while (stack.length > 0) {
    const open = stack.pop()!;
    if (open.written) out += `</${open.name}>`;
  }
  return out;
}

/** Status content as sent to a provider: cleaned, with shortcodes and hashtags marked `translate="no"`. */
export function protectHtml(html: string): string {
  return rewrite(html, "outgoing");
}

/** A plain text (content warning, poll option, media description) as HTML for a provider. */
export function protectText(text: string): string {
  return escapeHtml(text).replace(SHORTCODE, (code) => `<span translate="no">${code}</span>`);
}

/** A provider's translation of status content, safe to hand to clients. */
export function sanitizeTranslatedHtml(html: string): string {
  return rewrite(html, "incoming");
}

/** The text inside a provider's HTML (the translation of a plain text), entities decoded. */
export function textOfHtml(html: string): string {
  let text = "";
  let dropDepth = 0;
  const parser = new Parser(
    {
      onopentag(name) {
        if (DROPPED_WITH_CONTENT.has(name)) dropDepth++;
      },
      ontext(data) {
        if (dropDepth === 0) text += data;
      },
      onclosetag(name) {
        if (DROPPED_WITH_CONTENT.has(name)) dropDepth = Math.max(0, dropDepth - 1);
      },
    },
    { decodeEntities: true, lowerCaseTags: true },
  );
  parser.write(html);
  parser.end();
  return text;
}
