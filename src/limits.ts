/**
 * Limits the server enforces and advertises in the instance API. Every value here is checked
 * by the code that accepts the input, so what clients read is what the server does.
 */
export const LIMITS = {
  accounts: {
    maxDisplayNameLength: 30,
    maxNoteLength: 500,
    maxAvatarDescriptionLength: 150,
    maxHeaderDescriptionLength: 150,
    maxFeaturedTags: 10,
    maxPinnedStatuses: 5,
    maxProfileFields: 4,
    profileFieldNameLimit: 255,
    profileFieldValueLimit: 255,
  },
  statuses: {
    maxCharacters: 500,
    maxMediaAttachments: 4,
    charactersReservedPerUrl: 23,
  },
  media: {
    descriptionLimit: 1500,
    imageSizeLimit: 16 * 1024 * 1024,
    imageMatrixLimit: 7680 * 4320,
    /** Video and audio files (Mastodon's 99 MiB). */
    videoSizeLimit: 99 * 1024 * 1024,
    videoFrameRateLimit: 120,
    videoMatrixLimit: 3840 * 2160,
    /** Seconds: 20 minutes, Mastodon's 36,000 frames at 30 fps. */
    videoDurationLimit: 20 * 60,
    /** Seconds of audio (a long voice note or a podcast episode still fits in 99 MiB of MP3). */
    audioDurationLimit: 3 * 60 * 60,
    /** Image types sharp decodes here. */
    imageMimeTypes: ["image/jpeg", "image/png", "image/gif", "image/webp", "image/avif"],
  },
  polls: {
    maxOptions: 4,
    maxCharactersPerOption: 50,
    minExpiration: 300,
    maxExpiration: 2_629_746,
  },
} as const;
