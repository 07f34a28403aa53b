/** The media types of the files Rookery stores and links to, by their extension. */
const TYPES: Record<string, string> = {
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  png: "image/png",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  mp4: "video/mp4",
  webm: "video/webm",
  mp3: "audio/mpeg",
};

/** The media type of a file name, path or URL by its extension (a query is ignored); undefined when unknown. */
export function mediaTypeOfName(name: string): string | undefined {
  const extension = /\.(\w+)(?:[?#].*)?$/.exec(name)?.[1]?.toLowerCase();
  return extension ? TYPES[extension] : undefined;
}
