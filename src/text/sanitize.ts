/**
 * The sanitizer for HTML from other servers: Mastodon's `Sanitize::Config::MASTODON_STRICT`
 * (reference/behaviour.md §4) over a streaming htmlparser2 parse. Nothing of the input is copied
 * through: every element, attribute and text run is re-emitted from what the parser decoded, and
 * escaped again, so the output is canonical HTML a browser parses into exactly the tree built here.
 *
 * Choices where Mastodon's bytes cannot be or are not copied:
 * - `<br>` is written `<br />`, like our own formatter (Mastodon's local markup); Nokogiri writes
 *   `<br>`. Both parse the same; one spelling keeps our stored HTML uniform and makes our own
 *   markup pass through unchanged.
 * - Text and attribute values are escaped with `escapeHtml` (`& < > " '`); Nokogiri leaves quotes
 *   in text alone.
 * - A link's `target` stays where it was when present; `rel` and `target` are appended when absent
 *   (Nokogiri drops `target` and re-adds it last).
 * - The contents of script-like elements are dropped even inside a link that becomes text
 *   (Nokogiri's `node.text` would keep a script's source as text there).
 * - Input beyond `MAX_INPUT_LENGTH` characters, and everything after an element nested deeper than
 *   `MAX_NESTING`, is cut off: htmlparser2 keeps its open elements in an array it shifts, so
 *   unbounded nesting would cost quadratic time.
 */
import { Parser, type Handler } from "htmlparser2";
import { escapeHtml } from "./escape.ts";

/** Longer remote HTML is cut (an ActivityPub document is at most about 1 MB anyway). */
export const MAX_INPUT_LENGTH = 1_048_576;
/** Content nested deeper than this is cut (Nokogiri gives up at 400). */
export const MAX_NESTING = 256;

const KEPT = new Set([
  "p",
  "br",
  "span",
  "a",
  "del",
  "s",
  "pre",
  "blockquote",
  "code",
  "b",
  "strong",
  "u",
  "i",
  "em",
  "ul",
  "ol",
  "li",
  "ruby",
  "rt",
  "rp",
]);
const HEADINGS = new Set(["h1", "h2", "h3", "h4", "h5", "h6"]);
/** Removed with everything inside (Sanitize's default `remove_contents`, plus template, object and title). */
const DROPPED = new Set([
  "script",
  "style",
  "template",
  "iframe",
  "object",
  "applet",
  "noembed",
  "noframes",
  "noscript",
  "plaintext",
  "svg",
  "xmp",
  "title",
]);
/** Unwrapped elements whose content Sanitize surrounds with spaces, so words do not run together. */
const SPACED = new Set([
  "address",
  "article",
  "aside",
  "blockquote",
  "br",
  "dd",
  "div",
  "dl",
  "dt",
  "footer",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "header",
  "hgroup",
  "hr",
  "li",
  "nav",
  "ol",
  "p",
  "pre",
  "section",
  "ul",
]);

/** Beyond `lang`, which every kept element may carry. */
const ATTRIBUTES = new Map<string, ReadonlySet<string>>([
  ["a", new Set(["href", "rel", "class", "translate"])],
  ["span", new Set(["class", "translate"])],
  ["ol", new Set(["start", "reversed"])],
  ["li", new Set(["value"])],
  ["p", new Set(["class"])],
]);

const LINK_PROTOCOLS = new Set([
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
/** Sanitize::REGEX_PROTOCOL; Ruby's `\s` is ASCII whitespace only. */
const PROTOCOL = /^[ \t\r\n\f\v]*([^/#]*?)(?::|&#0*58|&#x0*3a)/i;

function isAllowedClass(name: string): boolean {
  return /^(?:h|p|u|dt|e)-/.test(name) || /^(?:mention|hashtag|ellipsis|invisible|quote-inline)$/.test(name);
}

/** Whether a link keeps its element: only absolute URLs with one of Mastodon's link schemes. */
export function isAllowedHref(href: string | undefined): boolean {
  const match = href === undefined ? null : PROTOCOL.exec(href);
  return match !== null && LINK_PROTOCOLS.has(match[1].toLowerCase());
}

type Attributes = Array<[string, string]>;

function keptAttributes(name: string, attribs: Record<string, string>): Attributes {
  const allowed = ATTRIBUTES.get(name);
  const kept: Attributes = [];
  for (const [key, value] of Object.entries(attribs)) {
    if (key === "target" && name === "a") kept.push(["target", "_blank"]);
    else if (key !== "lang" && !allowed?.has(key)) continue;
    else if (key === "class")
      kept.push([
        key,
        value
          .split(/[\t\n\f\r ]/)
          .filter(isAllowedClass)
          .join(" "),
      ]);
    else if (key !== "translate" || value === "no") kept.push([key, value]);
  }
  if (name === "a") {
    const rel = kept.find(([key]) => key === "rel");
    if (rel) rel[1] = "nofollow noopener";
    else kept.push(["rel", "nofollow noopener"]);
    if (!kept.some(([key]) => key === "target")) kept.push(["target", "_blank"]);
  }
  return kept;
}

/** Receives the sanitized document: only kept elements, with their cleaned attributes, and text. */
interface Sink {
  open(name: string, attributes: Attributes): void;
  close(name: string): void;
  text(text: string): void;
}

type FrameKind =
  | "pending" // its start tag never finished (input cut inside it)
  | "kept"
  | "heading" // written as <p><strong>
  | "linkText" // a link with a refused scheme: its text only
  | "unwrapped"
  | "dropped"
  | "math"
  | "inert"; // inside dropped content, a text-only link or <math>

interface Frame {
  name: string;
  kind: FrameKind;
  hadChild: boolean;
}

/** What a <math> element has shown so far of the `<semantics><annotation>` shape FEP-dc88 describes. */
interface MathCapture {
  /** Stack index of the <math> frame. */
  at: number;
  block: boolean;
  firstChild: "none" | "semantics" | "other";
  inSemantics: boolean;
  annotations: Array<{ encoding: string | undefined; text: string }>;
  /** Stack index of the open <annotation>, or -1. */
  annotationAt: number;
}

function mathText(math: MathCapture): string {
  const tex = math.annotations.find((a) => a.encoding === "application/x-tex");
  if (tex) return math.block ? `$$${tex.text}$$` : `$${tex.text}$`;
  // A text/plain annotation is not LaTeX, so it gets no dollar signs.
  return math.annotations.find((a) => a.encoding === "text/plain")?.text ?? "";
}

/** Turns parser events into sink calls under MASTODON_STRICT's rules. */
class StrictWalker implements Partial<Handler> {
  readonly #sink: Sink;
  readonly #stack: Frame[] = [];
  #parser: Parser | undefined;
  #dropped = 0;
  #linkText = 0;
  #math: MathCapture | undefined;
  #stopped = false;

  constructor(sink: Sink) {
    this.#sink = sink;
  }

  run(html: string): void {
    const parser = new Parser(this);
    this.#parser = parser;
    parser.write(html.length > MAX_INPUT_LENGTH ? html.slice(0, MAX_INPUT_LENGTH) : html);
    parser.end();
    // Closes whatever the input left open, including after a cut (the paused parser says nothing more).
    this.#stopped = true;
    while (this.#stack.length > 0) this.#closeTop();
  }

  #touch(): void {
    const top = this.#stack.at(-1);
    if (top) top.hadChild = true;
  }

  onopentagname(name: string): void {
    if (this.#stopped) return;
    if (this.#stack.length >= MAX_NESTING) {
      this.#stopped = true;
      this.#parser?.pause();
      return;
    }
    this.#touch();
    this.#stack.push({ name, kind: "pending", hadChild: false });
  }

  onopentag(name: string, attribs: Record<string, string>): void {
    if (this.#stopped) return;
    const frame = this.#stack.at(-1);
    if (!frame || frame.name !== name || frame.kind !== "pending") return;
    const at = this.#stack.length - 1;
    if (this.#dropped > 0) {
      frame.kind = "inert";
    } else if (this.#math) {
      frame.kind = "inert";
      this.#mathOpen(name, attribs, at);
    } else if (name === "math") {
      frame.kind = "math";
      this.#math = {
        at,
        block: attribs.display === "block",
        firstChild: "none",
        inSemantics: false,
        annotations: [],
        annotationAt: -1,
      };
    } else if (DROPPED.has(name)) {
      frame.kind = "dropped";
      this.#dropped++;
    } else if (this.#linkText > 0) {
      frame.kind = "inert";
    } else if (name === "a" && !isAllowedHref(attribs.href)) {
      frame.kind = "linkText";
      this.#linkText++;
    } else if (KEPT.has(name)) {
      frame.kind = "kept";
      this.#sink.open(name, keptAttributes(name, attribs));
    } else if (HEADINGS.has(name)) {
      frame.kind = "heading";
      this.#sink.open("p", []);
      this.#sink.open("strong", keptAttributes("strong", attribs));
    } else {
      frame.kind = "unwrapped";
      if (SPACED.has(name)) this.#sink.text(" ");
    }
  }

  #mathOpen(name: string, attribs: Record<string, string>, at: number): void {
    const math = this.#math!;
    const depth = at - math.at;
    if (depth === 1 && math.firstChild === "none") {
      math.firstChild = name === "semantics" ? "semantics" : "other";
      math.inSemantics = math.firstChild === "semantics";
    } else if (depth === 2 && math.inSemantics && name === "annotation" && math.annotationAt < 0) {
      math.annotations.push({ encoding: attribs.encoding, text: "" });
      math.annotationAt = at;
    }
  }

  ontext(text: string): void {
    if (this.#stopped) return;
    this.#touch();
    if (this.#dropped > 0) return;
    if (this.#math) {
      if (this.#math.annotationAt >= 0) this.#math.annotations.at(-1)!.text += text;
      return;
    }
    this.#sink.text(text);
  }

  oncomment(): void {
    if (!this.#stopped) this.#touch();
  }

  onclosetag(name: string): void {
    if (this.#stopped || this.#stack.at(-1)?.name !== name) return;
    this.#closeTop();
  }

  #closeTop(): void {
    const at = this.#stack.length - 1;
    const frame = this.#stack.pop()!;
    switch (frame.kind) {
      case "kept":
        this.#sink.close(frame.name);
        break;
      case "heading":
        this.#sink.close("strong");
        this.#sink.close("p");
        break;
      case "linkText":
        this.#linkText--;
        break;
      case "dropped":
        this.#dropped--;
        break;
      case "unwrapped":
        if (frame.hadChild && SPACED.has(frame.name)) this.#sink.text(" ");
        break;
      case "math": {
        const text = mathText(this.#math!);
        this.#math = undefined;
        if (text) this.#sink.text(text);
        break;
      }
      case "inert":
        if (this.#math?.annotationAt === at) this.#math.annotationAt = -1;
        if (this.#math && at - this.#math.at === 1) this.#math.inSemantics = false;
        break;
      case "pending":
        break;
    }
  }
}

class HtmlSink implements Sink {
  html = "";
  open(name: string, attributes: Attributes): void {
    let tag = `<${name}`;
    for (const [key, value] of attributes) tag += ` ${key}="${escapeHtml(value.replaceAll("\0", "\uFFFD"))}"`;
    this.html += name === "br" ? `${tag} />` : `${tag}>`;
  }
  close(name: string): void {
    if (name !== "br") this.html += `</${name}>`;
  }
  text(text: string): void {
    this.html += escapeHtml(text.replaceAll("\0", "\uFFFD"));
  }
}

const BLOCKS = new Set(["p", "pre", "blockquote", "ul", "ol"]);

/** Plain text: blocks apart by a blank line, list items and <br> on lines of their own. */
class PlainTextSink implements Sink {
  #text = "";
  /** Newlines owed before the next text (never written at the start or the end). */
  #breaks = 0;
  open(name: string): void {
    if (name === "br") this.#breaks++;
    else if (BLOCKS.has(name)) this.#breaks = Math.max(this.#breaks, 2);
    else if (name === "li") this.#breaks = Math.max(this.#breaks, 1);
  }
  close(name: string): void {
    if (BLOCKS.has(name)) this.#breaks = Math.max(this.#breaks, 2);
    else if (name === "li") this.#breaks = Math.max(this.#breaks, 1);
  }
  text(text: string): void {
    if (text === "") return;
    if (this.#text !== "" && this.#breaks > 0) this.#text += "\n".repeat(this.#breaks);
    this.#breaks = 0;
    this.#text += text;
  }
  get value(): string {
    return this.#text.trim();
  }
}

/** Makes HTML from another server safe to store and serve (Mastodon's MASTODON_STRICT rules). */
export function sanitizeHtml(html: string): string {
  const sink = new HtmlSink();
  new StrictWalker(sink).run(html);
  return sink.html;
}

/**
 * The text a reader sees in status HTML, for search and filters: entities decoded, paragraphs
 * separated by a blank line, `<br>` as a newline; what the sanitizer drops is not included.
 */
export function htmlToPlainText(html: string): string {
  const sink = new PlainTextSink();
  new StrictWalker(sink).run(html);
  return sink.value;
}
