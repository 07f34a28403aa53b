/**
 * Streaming subscriptions (reference/streaming.md §3–6): which channels a stream name means for a
 * viewer, and how a message on a channel becomes the event that viewer receives — rendered for
 * them, and dropped when they may not or do not want to see it (visibility, blocks, mutes, domain
 * blocks, `hide` filters). A connection (`StreamConnection`) serves one WebSocket (any number of
 * streams) or one SSE response (one stream); the HTTP edge only carries its frames.
 */
import type { Ctx } from "../../context.ts";
import { isIdLike } from "../../db/ids.ts";
import { statusesByIds } from "../../db/queries/statuses.ts";
import { activeFiltersOf } from "../../db/queries/filters.ts";
import type { FilterContext, StatusRow } from "../../db/schema.ts";
import { serializeAnnouncements } from "../../entities/announcement.ts";
import { serializeConversations } from "../../entities/conversation.ts";
import { FilterSet, hiddenBy } from "../../entities/filter.ts";
import { serializeNotifications } from "../../entities/notification.ts";
import { serializeStatuses, type Status } from "../../entities/status.ts";
import type { BusMessage } from "../../realtime/bus.ts";
import { scopesAllow } from "../auth/scopes.ts";
import type { UserViewer } from "../auth/viewer.ts";
import { publishedAnnouncement } from "../announcements/announcements.ts";
import { ownConversation, visibleLastStatuses } from "../conversations/conversations.ts";
import { notificationOf, presentable } from "../notifications/read.ts";
import { filterVisible } from "../visibility/find.ts";
import { isTagName } from "../tags/tags.ts";
import {
  ANNOUNCEMENTS_CHANNEL,
  directChannel,
  hashtagChannel,
  homeChannel,
  listChannel,
  notificationsChannel,
  systemChannel,
  tokenChannel,
  type StatusRef,
} from "./publish.ts";

/** A subscription refused; the WebSocket reports it in a frame, SSE as the response. */
export class StreamError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

export const STREAM_NAMES = [
  "user",
  "user:notification",
  "public",
  "public:media",
  "public:local",
  "public:local:media",
  "public:remote",
  "public:remote:media",
  "hashtag",
  "hashtag:local",
  "list",
  "direct",
] as const;

type ChannelKind = "home" | "notifications" | "list" | "public" | "direct" | "announcements";

export interface StreamRequest {
  stream: string;
  tag?: string;
  list?: string;
  /** `only_media` of the SSE public paths. */
  onlyMedia?: boolean;
}

/** A resolved stream: its label as events carry it, and its channels with how to render them. */
export interface ResolvedStream {
  label: string[];
  channels: Array<{ channel: string; kind: ChannelKind }>;
}

const SCOPE_ERROR = "Access token does not have the required scopes";

/** What `request` means for `viewer`, or a StreamError. */
export async function resolveStream(ctx: Ctx, viewer: UserViewer, request: StreamRequest): Promise<ResolvedStream> {
  let name = request.stream;
  if (request.onlyMedia && name.startsWith("public") && !name.endsWith(":media")) name = `${name}:media`;
  if (!(STREAM_NAMES as readonly string[]).includes(name)) throw new StreamError(400, "Unknown stream type");
  const canRead = scopesAllow(viewer.scopes, ["read:statuses"]);
  const canReadNotifications = scopesAllow(viewer.scopes, ["read:notifications"]);
  if (name === "user:notification") {
    if (!canReadNotifications) throw new StreamError(401, SCOPE_ERROR);
    return { label: [name], channels: [{ channel: notificationsChannel(viewer.account.id), kind: "notifications" }] };
  }
  if (!canRead) throw new StreamError(401, SCOPE_ERROR);
  const id = viewer.account.id;
  switch (name) {
    case "user":
      return {
        label: [name],
        channels: [
          { channel: homeChannel(id), kind: "home" },
          { channel: ANNOUNCEMENTS_CHANNEL, kind: "announcements" },
          ...(canReadNotifications ? [{ channel: notificationsChannel(id), kind: "notifications" as const }] : []),
        ],
      };
    case "hashtag":
    case "hashtag:local": {
      const tag = request.tag?.trim().replace(/^#/, "");
      if (!tag) throw new StreamError(400, "Missing tag name parameter");
      // A name no post could carry never gets events; it is still a valid subscription.
      const channel = isTagName(tag) ? hashtagChannel(tag, name === "hashtag:local") : `timeline:hashtag:invalid`;
      return { label: [name, request.tag!], channels: [{ channel, kind: "public" }] };
    }
    case "list": {
      const listId = request.list?.trim();
      if (!listId) throw new StreamError(400, "Missing list name parameter");
      const owned = isIdLike(listId)
        ? await ctx.db.kysely
            .selectFrom("lists")
            .select("id")
            .where("id", "=", listId)
            .where("account_id", "=", id)
            .executeTakeFirst()
        : undefined;
      if (!owned) throw new StreamError(401, "Not authorized to stream this list");
      return { label: [name, listId], channels: [{ channel: listChannel(listId), kind: "list" }] };
    }
    case "direct":
      return { label: [name], channels: [{ channel: directChannel(id), kind: "direct" }] };
    default:
      return { label: [name], channels: [{ channel: `timeline:${name}`, kind: "public" }] };
  }
}

/** What a connection sends: an event of a stream, with its payload as a string (or none). */
export type Deliver = (label: readonly string[], event: string, payload: string | undefined) => void;

/** How long a connection trusts what it loaded about its viewer (filters, blocks, mutes). */
const VIEWER_FACTS_TTL = 60_000;

interface ViewerFacts {
  loadedAt: number;
  /** Accounts the viewer blocks or mutes, and accounts that block the viewer. */
  hidden: Set<string>;
  blockedBy: Set<string>;
  domains: Set<string>;
  filters: FilterSet;
  mutedConversations: Set<string>;
}

/** A public status rendered once per process for everyone, with what the per-viewer checks need. */
interface SharedRendering {
  row: StatusRow;
  json: Status;
  authorDomain: string | null;
  mentioned: string[];
}

const SHARED_TTL = 10_000;

/** Anonymous renderings of public statuses, shared by every connection of the process. */
export class SharedStatusCache {
  readonly #entries = new Map<string, { at: number; rendering: Promise<SharedRendering | undefined> }>();

  /** `audience`: `public` renders public statuses only; `feed` any status (for home feeds that hold it). */
  get(
    ctx: Ctx,
    statusId: string,
    event: string,
    audience: "public" | "feed" = "public",
  ): Promise<SharedRendering | undefined> {
    const now = Date.now();
    for (const [key, entry] of this.#entries) if (now - entry.at > SHARED_TTL) this.#entries.delete(key);
    const key = `${audience}:${event}:${statusId}`;
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = { at: now, rendering: render(ctx, statusId, audience) };
      this.#entries.set(key, entry);
    }
    return entry.rendering;
  }
}

async function render(ctx: Ctx, statusId: string, audience: "public" | "feed"): Promise<SharedRendering | undefined> {
  const [row] = await statusesByIds(ctx.db.kysely, [statusId]);
  if (!row || row.deleted_at || (audience === "public" && row.visibility !== "public")) return undefined;
  const [json] = await serializeStatuses(ctx, [row], undefined);
  const [author, mentions] = await Promise.all([
    ctx.db.kysely.selectFrom("accounts").select(["domain"]).where("id", "=", row.account_id).executeTakeFirst(),
    ctx.db.kysely.selectFrom("mentions").select("account_id").where("status_id", "=", row.id).execute(),
  ]);
  if (!json || !author) return undefined;
  return { row, json, authorDomain: author.domain, mentioned: mentions.map((m) => m.account_id) };
}

/**
 * One client's streams: subscribes to their channels (and to the viewer's system and token
 * channels, which end the connection when the token is revoked or the user suspended), renders
 * each message for the viewer and hands it to `deliver`, one at a time in arrival order.
 */
export class StreamConnection {
  readonly #ctx: Ctx;
  readonly #viewer: UserViewer;
  readonly #deliver: Deliver;
  readonly #onKill: () => void;
  readonly #shared: SharedStatusCache;
  readonly #streams = new Map<string, { label: string[]; release: Array<() => void> }>();
  #system: Array<() => void> = [];
  #facts: Promise<ViewerFacts> | undefined;
  #queue: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(ctx: Ctx, viewer: UserViewer, shared: SharedStatusCache, deliver: Deliver, onKill: () => void) {
    this.#ctx = ctx;
    this.#viewer = viewer;
    this.#shared = shared;
    this.#deliver = deliver;
    this.#onKill = onKill;
  }

  get viewer(): UserViewer {
    return this.#viewer;
  }

  /** Listens for the end of the token or the user, before any stream. */
  async open(): Promise<void> {
    const onSystem = (message: BusMessage) => {
      if (message.event === "kill") this.#onKill();
      else {
        this.#facts = undefined;
        if (message.event === "filters_changed")
          for (const { label } of this.#streams.values())
            if (label[0] === "user") this.#deliver(label, "filters_changed", undefined);
      }
    };
    this.#system = await Promise.all([
      this.#ctx.events.subscribe(systemChannel(this.#viewer.account.id), onSystem),
      this.#ctx.events.subscribe(tokenChannel(this.#viewer.tokenId), onSystem),
    ]);
  }

  /** Subscribes to a stream (again: nothing changes); a StreamError when it is refused. */
  async subscribe(request: StreamRequest): Promise<void> {
    const resolved = await resolveStream(this.#ctx, this.#viewer, request);
    const key = resolved.channels.map((c) => c.channel).join(" ");
    if (this.#streams.has(key) || this.#closed) return;
    const entry = { label: resolved.label, release: [] as Array<() => void> };
    this.#streams.set(key, entry);
    // What events are checked against is loaded now, not when the first event of a busy moment arrives.
    if (resolved.channels.some((c) => c.kind === "public" || c.kind === "home" || c.kind === "list"))
      await this.#viewerFacts();
    for (const { channel, kind } of resolved.channels) {
      const listener = (message: BusMessage) => this.#enqueue(() => this.#handle(resolved.label, kind, message));
      entry.release.push(await this.#ctx.events.subscribe(channel, listener));
    }
  }

  /** Ends a stream; false when it was not subscribed. */
  async unsubscribe(request: StreamRequest): Promise<boolean> {
    const resolved = await resolveStream(this.#ctx, this.#viewer, request);
    const key = resolved.channels.map((c) => c.channel).join(" ");
    const entry = this.#streams.get(key);
    if (!entry) return false;
    this.#streams.delete(key);
    for (const release of entry.release) release();
    return true;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const entry of this.#streams.values()) for (const release of entry.release) release();
    this.#streams.clear();
    for (const release of this.#system) release();
  }

  #enqueue(work: () => Promise<void>): void {
    this.#queue = this.#queue
      .then(() => (this.#closed ? undefined : work()))
      .catch((error: unknown) => this.#ctx.log.warn({ err: error }, "stream event not delivered"));
  }

  async #handle(label: string[], kind: ChannelKind, message: BusMessage): Promise<void> {
    if (typeof message.payload === "string" || message.payload === undefined) {
      const passThrough = ["delete", "notifications_merged", "announcement.delete", "announcement.reaction"];
      if (passThrough.includes(message.event)) this.#deliver(label, message.event, message.payload as string);
      return;
    }
    if (kind === "announcements" && message.event === "announcement") {
      const row = await publishedAnnouncement(
        this.#ctx,
        (message.payload as { announcementId: string }).announcementId,
      ).catch(() => undefined);
      if (!row) return;
      const [json] = await serializeAnnouncements(this.#ctx, [row], this.#viewer.account);
      if (json) this.#deliver(label, "announcement", JSON.stringify(json));
      return;
    }
    const payload = message.payload as Record<string, string>;
    if (kind === "notifications" && message.event === "notification") {
      const json = await this.#renderNotification(payload.notificationId!);
      if (json) this.#deliver(label, "notification", json);
      return;
    }
    if (kind === "direct" && message.event === "conversation") {
      const row = await ownConversation(this.#ctx, this.#viewer.account, payload.conversationId).catch(() => undefined);
      if (!row) return;
      const lastStatuses = await visibleLastStatuses(this.#ctx, [row], this.#viewer.account.id);
      const [json] = await serializeConversations(this.#ctx, [row], lastStatuses, this.#viewer.account);
      if (json) this.#deliver(label, "conversation", JSON.stringify(json));
      return;
    }
    if (message.event !== "update" && message.event !== "status.update") return;
    const { statusId } = payload as unknown as StatusRef;
    const json =
      kind === "public"
        ? await this.#renderShared(statusId, message.event)
        : message.event === "update"
          ? await this.#renderNewInFeed(statusId)
          : await this.#renderOwn(statusId, "home");
    if (json) this.#deliver(label, message.event, json);
  }

  async #renderNotification(id: string): Promise<string | undefined> {
    const viewer = this.#viewer.account;
    const row = await notificationOf(this.#ctx, viewer.id, id).catch(() => undefined);
    if (!row || row.filtered) return undefined;
    const shown = await presentable(this.#ctx, viewer.id, [row]);
    const [json] = await serializeNotifications(this.#ctx, shown.rows, shown.statuses, viewer);
    return json ? JSON.stringify(json) : undefined;
  }

  /** A status of the viewer's home or list, rendered for them (undefined: not to be shown). */
  async #renderOwn(statusId: string, context: FilterContext | undefined): Promise<string | undefined> {
    const viewer = this.#viewer.account;
    const rows = await filterVisible(this.#ctx, await statusesByIds(this.#ctx.db.kysely, [statusId]), viewer.id);
    if (rows.length === 0) return undefined;
    const [json] = await serializeStatuses(this.#ctx, rows, viewer, { filterContext: context });
    if (!json || hiddenBy(json.filtered)) return undefined;
    return JSON.stringify(json);
  }

  /**
   * A status just written into this viewer's home feed or list. A new post (not a boost, without a
   * poll) looks the same to every reader but for what they cannot have done yet (favourite, boost,
   * bookmark: all false) and what the connection already knows (a muted conversation, filters), so
   * it is rendered once per process; boosts and polls, whose flags depend on the reader, are
   * rendered for the viewer.
   */
  async #renderNewInFeed(statusId: string): Promise<string | undefined> {
    const shared = await this.#shared.get(this.#ctx, statusId, "update", "feed");
    if (!shared) return undefined;
    if (shared.row.reblog_of_id || shared.row.poll_id) return this.#renderOwn(statusId, "home");
    const facts = await this.#viewerFacts();
    const json = shared.json;
    const filtered = this.#filtersFor(facts, shared.row.id, json, "home");
    if (hiddenBy(filtered)) return undefined;
    const conversation = shared.row.conversation_id;
    return JSON.stringify({
      ...json,
      favourited: false,
      reblogged: false,
      muted: conversation !== null && facts.mutedConversations.has(conversation),
      bookmarked: false,
      ...(shared.row.account_id === this.#viewer.account.id && shared.row.visibility !== "direct"
        ? { pinned: false }
        : {}),
      filtered,
    });
  }

  #filtersFor(facts: ViewerFacts, statusId: string, json: Status, context: FilterContext) {
    if (facts.filters.empty) return [];
    return facts.filters.resultsFor(
      [statusId],
      {
        spoilerText: json.spoiler_text,
        html: json.content ?? "",
        pollOptions: json.poll?.options.map((o) => o.title) ?? [],
        mediaDescriptions: json.media_attachments.map((m) => m.description),
      },
      context,
    );
  }

  /** A public status, rendered once for all, then checked against this viewer's relations and filters. */
  async #renderShared(statusId: string, event: string): Promise<string | undefined> {
    const shared = await this.#shared.get(this.#ctx, statusId, event);
    if (!shared) return undefined;
    const facts = await this.#viewerFacts();
    const author = shared.row.account_id;
    if (facts.hidden.has(author) || facts.blockedBy.has(author)) return undefined;
    if (shared.mentioned.some((id) => facts.hidden.has(id))) return undefined;
    if (shared.authorDomain && facts.domains.has(shared.authorDomain)) return undefined;
    const json = shared.json;
    const filtered = this.#filtersFor(facts, shared.row.id, json, "public");
    if (hiddenBy(filtered)) return undefined;
    return JSON.stringify({ ...json, filtered });
  }

  #viewerFacts(): Promise<ViewerFacts> {
    const current = this.#facts;
    if (current) {
      return current.then((facts) => {
        if (Date.now() - facts.loadedAt < VIEWER_FACTS_TTL) return facts;
        this.#facts = undefined;
        return this.#viewerFacts();
      });
    }
    const loading = this.#loadFacts();
    this.#facts = loading;
    loading.catch(() => {
      if (this.#facts === loading) this.#facts = undefined;
    });
    return loading;
  }

  async #loadFacts(): Promise<ViewerFacts> {
    const db = this.#ctx.db.kysely;
    const id = this.#viewer.account.id;
    const now = new Date().toISOString();
    const [blocks, mutes, blockedBy, domains, filters, conversations] = await Promise.all([
      db.selectFrom("blocks").select("target_account_id").where("account_id", "=", id).execute(),
      db
        .selectFrom("mutes")
        .select("target_account_id")
        .where("account_id", "=", id)
        .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", now)]))
        .execute(),
      db.selectFrom("blocks").select("account_id").where("target_account_id", "=", id).execute(),
      db.selectFrom("account_domain_blocks").select("domain").where("account_id", "=", id).execute(),
      activeFiltersOf(db, id),
      db.selectFrom("conversation_mutes").select("conversation_id").where("account_id", "=", id).execute(),
    ]);
    return {
      loadedAt: Date.now(),
      hidden: new Set([...blocks, ...mutes].map((r) => r.target_account_id)),
      blockedBy: new Set(blockedBy.map((r) => r.account_id)),
      domains: new Set(domains.map((r) => r.domain)),
      filters: new FilterSet(filters),
      mutedConversations: new Set(conversations.map((c) => String(c.conversation_id))),
    };
  }
}
