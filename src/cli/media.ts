import { UsageError, type Command } from "./command.ts";

/** `1.5 MB`: a size for people (the sizes recorded, so approximate). */
function humanSize(bytes: number): string {
  const units = ["bytes", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

export const mediaRemove: Command = {
  path: ["media", "remove"],
  summary:
    "Drops the kept copies of other servers' media older than --days (the links to them stay; the media proxy " +
    "fetches them again when asked). With --prune-profiles it drops the avatars and headers of remote accounts " +
    "not fetched for --days instead, with --remove-headers only their headers; by default only of accounts " +
    "no local account follows or is followed by (--include-follows: of all). They come back when the account " +
    "is fetched again.",
  usage: "media remove [--days N] [--prune-profiles | --remove-headers] [--include-follows] [--dry-run]",
  positionals: [0, 0],
  options: {
    days: { type: "string", description: "Age in days of what to drop (default 7)" },
    "prune-profiles": { type: "boolean", description: "Drop remote avatars and headers instead of media" },
    "remove-headers": { type: "boolean", description: "Drop remote headers only instead of media" },
    "include-follows": {
      type: "boolean",
      description: "With --prune-profiles or --remove-headers: also of followed and following accounts",
    },
    "dry-run": { type: "boolean", description: "Count what would be dropped, drop nothing" },
  },
  async run(ctx, { values }, io) {
    const raw = (values.days as string | undefined) ?? "7";
    if (!/^\d{1,5}$/.test(raw)) throw new UsageError(`--days must be a whole number of days, got "${raw}"`);
    const pruneProfiles = values["prune-profiles"] === true;
    const removeHeaders = values["remove-headers"] === true;
    const includeFollows = values["include-follows"] === true;
    const dryRun = values["dry-run"] === true;
    if (pruneProfiles && removeHeaders)
      throw new UsageError("--prune-profiles and --remove-headers cannot be given together");
    if (includeFollows && !pruneProfiles && !removeHeaders)
      throw new UsageError("--include-follows goes only with --prune-profiles or --remove-headers");
    const olderThan = new Date(Date.now() - Number(raw) * 24 * 60 * 60 * 1000);
    const onProgress = (done: number) => io.err(`${done} ${dryRun ? "found" : "dropped"}…`);
    const suffix = dryRun ? " (dry run: nothing was dropped)" : "";

    if (pruneProfiles || removeHeaders) {
      const { pruneRemoteProfileImages } = await import("../services/media/remote_profiles.ts");
      const accounts = await pruneRemoteProfileImages(ctx, olderThan, {
        headersOnly: removeHeaders,
        includeFollows,
        dryRun,
        onProgress,
      });
      const what = removeHeaders ? "headers" : "avatars and headers";
      io.out(
        `${dryRun ? "Would drop" : "Dropped"} the kept ${what} of ${accounts} remote account${accounts === 1 ? "" : "s"} not fetched for ${raw} days.${suffix}`,
      );
      return 0;
    }
    const { removeCachedRemoteMedia } = await import("../services/media/remote.ts");
    const removed = await removeCachedRemoteMedia(ctx, olderThan, { dryRun, onProgress });
    io.out(
      `${dryRun ? "Would drop" : "Dropped"} ${removed.count} kept cop${removed.count === 1 ? "y" : "ies"} of remote media older than ${raw} days (about ${humanSize(removed.bytes)}).${suffix}`,
    );
    return 0;
  },
};
