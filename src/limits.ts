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
    videoSizeLimit: 99 * 1024 * 1024,
    videoFrameRateLimit: 120,
    videoMatrixLimit: 3840 * 2160,
    /** Image types sharp decodes here; video and audio need a transcoder Rookery does not ship yet. */
    supportedMimeTypes: ["image/jpeg", "image/png", "image/gif", "image/webp", "image/avif"],
  },
  polls: {
    maxOptions: 4,
    maxCharactersPerOption: 50,
    minExpiration: 300,
    maxExpiration: 2_629_746,
  },
} as const;
