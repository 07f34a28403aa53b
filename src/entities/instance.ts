import type { Ctx } from "../context.ts";
import { LIMITS } from "../limits.ts";
import type { InstanceRule, InstanceSettings } from "../db/schema.ts";
import { escapeHtml } from "../text/escape.ts";
import { API_VERSIONS, VERSION_STRING } from "../version.ts";
import { supportedMimeTypes } from "../media/transcode.ts";
import type { Account } from "./account.ts";

/** What the instance serializers need beyond configuration: settings, counters, the contact account. */
export interface InstanceFacts {
  settings: InstanceSettings;
  contactAccount: Account | null;
  /** The server's VAPID public key (Web Push). */
  vapidKey: string;
  /** Whether a translation service is configured. */
  translationEnabled: boolean;
}

export interface InstanceStats {
  user_count: number;
  status_count: number;
  domain_count: number;
}

export function serializeRules(rules: readonly InstanceRule[]) {
  return rules.map((rule, i) => ({ id: String(i + 1), text: rule.text, hint: rule.hint, translations: {} }));
}

function streamingUrl(ctx: Ctx): string {
  return `${ctx.config.https ? "wss" : "ws"}://${ctx.config.webDomain}`;
}

/** Plain text with blank-line paragraphs, as HTML. */
export function paragraphsHtml(text: string): string {
  return text
    .split(/\r?\n\s*\r?\n/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => `<p>${escapeHtml(p).replace(/\r?\n/g, "<br />")}</p>`)
    .join("");
}

function timelinesAccess(settings: InstanceSettings) {
  const access = settings.timeline_preview ? "public" : "authenticated";
  const both = { local: access, remote: access };
  return { live_feeds: both, hashtag_feeds: both, trending_link_feeds: both };
}

function registrationMessage(settings: InstanceSettings): string | null {
  if (settings.registrations_mode !== "none") return null;
  return settings.closed_registrations_message ? paragraphsHtml(settings.closed_registrations_message) : null;
}

function thumbnailUrl(ctx: Ctx): string {
  return `${ctx.config.baseUrl}/preview.png`;
}

/** `GET /api/v2/instance`. */
export function serializeInstanceV2(ctx: Ctx, facts: InstanceFacts, activeMonth: number) {
  const { settings } = facts;
  const { config } = ctx;
  return {
    domain: config.localDomain,
    title: settings.site_title,
    version: VERSION_STRING,
    source_url: config.sourceUrl,
    description: settings.site_short_description,
    usage: { users: { active_month: config.limitedFederationMode ? 0 : activeMonth } },
    thumbnail: { url: thumbnailUrl(ctx) },
    icon: [],
    languages: ["en"],
    configuration: {
      urls: {
        streaming: streamingUrl(ctx),
        status: null,
      },
      vapid: { public_key: facts.vapidKey },
      accounts: {
        max_display_name_length: LIMITS.accounts.maxDisplayNameLength,
        max_note_length: LIMITS.accounts.maxNoteLength,
        max_avatar_description_length: LIMITS.accounts.maxAvatarDescriptionLength,
        max_header_description_length: LIMITS.accounts.maxHeaderDescriptionLength,
        max_featured_tags: LIMITS.accounts.maxFeaturedTags,
        max_pinned_statuses: LIMITS.accounts.maxPinnedStatuses,
        max_profile_fields: LIMITS.accounts.maxProfileFields,
        profile_field_name_limit: LIMITS.accounts.profileFieldNameLimit,
        profile_field_value_limit: LIMITS.accounts.profileFieldValueLimit,
      },
      statuses: {
        max_characters: LIMITS.statuses.maxCharacters,
        max_media_attachments: LIMITS.statuses.maxMediaAttachments,
        characters_reserved_per_url: LIMITS.statuses.charactersReservedPerUrl,
      },
      media_attachments: {
        description_limit: LIMITS.media.descriptionLimit,
        image_matrix_limit: LIMITS.media.imageMatrixLimit,
        image_size_limit: LIMITS.media.imageSizeLimit,
        supported_mime_types: supportedMimeTypes(LIMITS.media.imageMimeTypes, ctx.config.transcoder),
        video_frame_rate_limit: LIMITS.media.videoFrameRateLimit,
        video_matrix_limit: LIMITS.media.videoMatrixLimit,
        video_size_limit: LIMITS.media.videoSizeLimit,
      },
      polls: {
        max_options: LIMITS.polls.maxOptions,
        max_characters_per_option: LIMITS.polls.maxCharactersPerOption,
        min_expiration: LIMITS.polls.minExpiration,
        max_expiration: LIMITS.polls.maxExpiration,
      },
      translation: { enabled: facts.translationEnabled },
      timelines_access: timelinesAccess(settings),
      limited_federation: config.limitedFederationMode,
    },
    registrations: {
      enabled: settings.registrations_mode !== "none",
      approval_required: settings.registrations_mode === "approved",
      reason_required: settings.registrations_mode === "approved" && settings.require_invite_text,
      message: registrationMessage(settings),
      min_age: null,
      url: null,
    },
    api_versions: API_VERSIONS,
    contact: { email: settings.site_contact_email, account: facts.contactAccount },
    rules: serializeRules(settings.rules),
  };
}

/** `GET /api/v1/instance` (deprecated in Mastodon 4.0, still read by older clients). */
export function serializeInstanceV1(ctx: Ctx, facts: InstanceFacts, stats: InstanceStats) {
  const { settings } = facts;
  const { config } = ctx;
  return {
    uri: config.localDomain,
    title: settings.site_title,
    short_description: settings.site_short_description,
    description: settings.site_short_description,
    email: settings.site_contact_email,
    version: VERSION_STRING,
    urls: { streaming_api: streamingUrl(ctx) },
    stats,
    thumbnail: thumbnailUrl(ctx),
    languages: ["en"],
    registrations: settings.registrations_mode !== "none",
    approval_required: settings.registrations_mode === "approved",
    invites_enabled: false,
    configuration: {
      accounts: { max_featured_tags: LIMITS.accounts.maxFeaturedTags },
      statuses: {
        max_characters: LIMITS.statuses.maxCharacters,
        max_media_attachments: LIMITS.statuses.maxMediaAttachments,
        characters_reserved_per_url: LIMITS.statuses.charactersReservedPerUrl,
      },
      media_attachments: {
        supported_mime_types: supportedMimeTypes(LIMITS.media.imageMimeTypes, ctx.config.transcoder),
        image_size_limit: LIMITS.media.imageSizeLimit,
        image_matrix_limit: LIMITS.media.imageMatrixLimit,
        video_size_limit: LIMITS.media.videoSizeLimit,
        video_frame_rate_limit: LIMITS.media.videoFrameRateLimit,
        video_matrix_limit: LIMITS.media.videoMatrixLimit,
      },
      polls: {
        max_options: LIMITS.polls.maxOptions,
        max_characters_per_option: LIMITS.polls.maxCharactersPerOption,
        min_expiration: LIMITS.polls.minExpiration,
        max_expiration: LIMITS.polls.maxExpiration,
      },
    },
    contact_account: facts.contactAccount,
    rules: serializeRules(settings.rules),
  };
}
