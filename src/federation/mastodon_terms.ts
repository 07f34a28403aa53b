/**
 * What Mastodon puts in a post that Fedify's vocabulary has no field for, sent the way Mastodon
 * sends it (reference/federation.md §3.1, §3.3): an attachment's `blurhash` and `focalPoint`
 * (`toot:`, a list of two numbers in -1..1) and a post's `conversation` (`ostatus:`; `context`,
 * the ActivityStreams term, is Fedify's own).
 *
 * Fedify writes JSON-LD by expanding an object and compacting it with a context of its own, so a
 * property can only be added where both happen: these subclasses add their terms to the expanded
 * form (which an embedding object's serialization asks them for), and compact the posts and the
 * activities that carry them with `POST_CONTEXT`, Fedify's context plus Mastodon's definitions of
 * the added terms. The terms are therefore there, with their meaning, whenever the JSON is made:
 * before an object integrity proof or a Linked Data signature is computed over it, at an object's
 * id, in collections. What Fedify parses back loses them: an activity that carries these must not
 * be serialized again from a parse (`carriesMastodonTerms`; Fedify's fan-out queue does that).
 */
import { Create, Document, Note, Question, Update } from "@fedify/vocab";

const TOOT = "http://joinmastodon.org/ns#";
const OSTATUS = "http://ostatus.org#";

type ToJsonLdOptions = NonNullable<Parameters<Note["toJsonLd"]>[0]>;
type JsonLdContext = ToJsonLdOptions["context"];
type ExpandedNode = Record<string, unknown>;

/**
 * Fedify's context for activities (`Create.toJsonLd`'s default) plus Mastodon's terms Fedify does
 * not define. Term definitions with `@container` are not in Fedify's declared context type, though
 * its own defaults use such definitions; hence the cast.
 */
export const POST_CONTEXT = [
  "https://w3id.org/identity/v1",
  "https://www.w3.org/ns/activitystreams",
  "https://w3id.org/security/data-integrity/v1",
  "https://gotosocial.org/ns",
  {
    toot: TOOT,
    misskey: "https://misskey-hub.net/ns#",
    fedibird: "http://fedibird.com/ns#",
    ostatus: OSTATUS,
    sensitive: "as:sensitive",
    votersCount: { "@id": "toot:votersCount", "@type": "http://www.w3.org/2001/XMLSchema#nonNegativeInteger" },
    Emoji: "toot:Emoji",
    Hashtag: "as:Hashtag",
    ChatMessage: "http://litepub.social/ns#ChatMessage",
    quote: { "@id": "https://w3id.org/fep/044f#quote", "@type": "@id" },
    quoteUrl: "as:quoteUrl",
    _misskey_quote: "misskey:_misskey_quote",
    quoteUri: "fedibird:quoteUri",
    QuoteAuthorization: "https://w3id.org/fep/044f#QuoteAuthorization",
    QuoteRequest: "https://w3id.org/fep/044f#QuoteRequest",
    quoteAuthorization: { "@id": "https://w3id.org/fep/044f#quoteAuthorization", "@type": "@id" },
    emojiReactions: { "@id": "fedibird:emojiReactions", "@type": "@id" },
    blurhash: "toot:blurhash",
    focalPoint: { "@container": "@list", "@id": "toot:focalPoint" },
    conversation: "ostatus:conversation",
  },
] as unknown as JsonLdContext;

/** The term definitions POST_CONTEXT adds, for a compact document made with another context. */
const ADDED_TERMS = {
  toot: TOOT,
  ostatus: OSTATUS,
  blurhash: "toot:blurhash",
  focalPoint: { "@container": "@list", "@id": "toot:focalPoint" },
  conversation: "ostatus:conversation",
};

/** Compact options: POST_CONTEXT unless the caller chose a context. */
const compactOptions = (options: ToJsonLdOptions): ToJsonLdOptions => ({
  contextLoader: options.contextLoader,
  format: "compact",
  context: options.context ?? POST_CONTEXT,
});

const firstNode = (expanded: unknown): ExpandedNode | undefined =>
  Array.isArray(expanded) && typeof expanded[0] === "object" && expanded[0] !== null
    ? (expanded[0] as ExpandedNode)
    : undefined;

/** A compact document made with a context that lacks the added terms (Fedify's default) gets them. */
function withAddedTerms(json: Record<string, unknown>): Record<string, unknown> {
  const context = json["@context"];
  if (context === undefined) return json;
  return { ...json, "@context": [...(Array.isArray(context) ? context : [context]), ADDED_TERMS] };
}

/** An attachment's blurhash and focal point (x, y in -1..1, 0,0 the centre). */
export interface MediaTerms {
  blurhash?: string | null;
  focalPoint?: readonly [number, number] | null;
}

type DocumentValues = ConstructorParameters<typeof Document>[0];
type DocumentOptions = ConstructorParameters<typeof Document>[1];

/** A media attachment's Document, with Mastodon's `blurhash` and `focalPoint`. */
export class MediaDocument extends Document {
  #terms: MediaTerms = {};

  constructor(values: DocumentValues & MediaTerms, options?: DocumentOptions) {
    super(values, options);
    this.#terms = { blurhash: values.blurhash ?? null, focalPoint: values.focalPoint ?? null };
  }

  get blurhash(): string | null {
    return this.#terms.blurhash ?? null;
  }

  get focalPoint(): readonly [number, number] | null {
    return this.#terms.focalPoint ?? null;
  }

  override clone(values: Parameters<Document["clone"]>[0] = {}, options: DocumentOptions = {}): MediaDocument {
    const clone = super.clone(values, options) as MediaDocument;
    clone.#terms = this.#terms;
    return clone;
  }

  override async toJsonLd(options: ToJsonLdOptions = {}): Promise<unknown> {
    const json = await super.toJsonLd(options);
    const { blurhash, focalPoint } = this;
    if (options.format === "expand") {
      const node = firstNode(json);
      if (node && blurhash) node[`${TOOT}blurhash`] = [{ "@value": blurhash }];
      if (node && focalPoint) node[`${TOOT}focalPoint`] = [{ "@list": focalPoint.map((v) => ({ "@value": v })) }];
      return json;
    }
    if (typeof json !== "object" || json === null || (!blurhash && !focalPoint)) return json;
    return withAddedTerms({
      ...(json as Record<string, unknown>),
      ...(blurhash ? { blurhash } : {}),
      ...(focalPoint ? { focalPoint: [...focalPoint] } : {}),
    });
  }
}

/** The thread a post belongs to, as Mastodon names it (`ostatus:conversation`). */
export interface ThreadTerms {
  conversation?: string | null;
}

/** Adds `conversation` to the expanded form of a post. */
function expandConversation(expanded: unknown, conversation: string | null): unknown {
  const node = firstNode(expanded);
  if (node && conversation) node[`${OSTATUS}conversation`] = [{ "@value": conversation }];
  return expanded;
}

/**
 * A post's compact form: Fedify's compaction with POST_CONTEXT (which writes what the attachments
 * added to their expanded form under Mastodon's names), and the post's own `conversation`, which
 * Fedify's compaction does not ask this class for.
 */
async function compactPost(
  compact: (options: ToJsonLdOptions) => Promise<unknown>,
  options: ToJsonLdOptions,
  conversation: string | null,
): Promise<unknown> {
  const json = await compact(compactOptions(options));
  if (!conversation || typeof json !== "object" || json === null) return json;
  const withConversation = { ...(json as Record<string, unknown>), conversation };
  return options.context === undefined ? withConversation : withAddedTerms(withConversation);
}

type NoteValues = ConstructorParameters<typeof Note>[0];
type NoteOptions = ConstructorParameters<typeof Note>[1];

/** A Note with the thread it belongs to (`conversation`). */
export class ThreadedNote extends Note {
  #conversation: string | null = null;

  constructor(values: NoteValues & ThreadTerms, options?: NoteOptions) {
    super(values, options);
    this.#conversation = values.conversation ?? null;
  }

  get conversation(): string | null {
    return this.#conversation;
  }

  override clone(values: Parameters<Note["clone"]>[0] = {}, options: NoteOptions = {}): ThreadedNote {
    const clone = super.clone(values, options) as ThreadedNote;
    clone.#conversation = this.#conversation;
    return clone;
  }

  override async toJsonLd(options: ToJsonLdOptions = {}): Promise<unknown> {
    if (options.format === "expand") return expandConversation(await super.toJsonLd(options), this.#conversation);
    return compactPost((o) => super.toJsonLd(o), options, this.#conversation);
  }
}

type QuestionValues = ConstructorParameters<typeof Question>[0];
type QuestionOptions = ConstructorParameters<typeof Question>[1];

/** A Question (a post with a poll) with the thread it belongs to (`conversation`). */
export class ThreadedQuestion extends Question {
  #conversation: string | null = null;

  constructor(values: QuestionValues & ThreadTerms, options?: QuestionOptions) {
    super(values, options);
    this.#conversation = values.conversation ?? null;
  }

  get conversation(): string | null {
    return this.#conversation;
  }

  override clone(values: Parameters<Question["clone"]>[0] = {}, options: QuestionOptions = {}): ThreadedQuestion {
    const clone = super.clone(values, options) as ThreadedQuestion;
    clone.#conversation = this.#conversation;
    return clone;
  }

  override async toJsonLd(options: ToJsonLdOptions = {}): Promise<unknown> {
    if (options.format === "expand") return expandConversation(await super.toJsonLd(options), this.#conversation);
    return compactPost((o) => super.toJsonLd(o), options, this.#conversation);
  }
}

/** The Create of a post, compacted with POST_CONTEXT. */
export class PostCreate extends Create {
  override async toJsonLd(options: ToJsonLdOptions = {}): Promise<unknown> {
    return super.toJsonLd(options.format === "expand" ? options : compactOptions(options));
  }
}

/** The Update of a post, compacted with POST_CONTEXT. */
export class PostUpdate extends Update {
  override async toJsonLd(options: ToJsonLdOptions = {}): Promise<unknown> {
    return super.toJsonLd(options.format === "expand" ? options : compactOptions(options));
  }
}

/**
 * Whether `activity` carries terms only these classes write: it must then be sent as serialized
 * here, never parsed and serialized again (Fedify's fan-out does that, and would drop them, and
 * break the object integrity proof made over them).
 */
export const carriesMastodonTerms = (activity: unknown): boolean =>
  activity instanceof PostCreate || activity instanceof PostUpdate;
