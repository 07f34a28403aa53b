import { UsageError, type Command } from "./command.ts";

export const mediaRemove: Command = {
  path: ["media", "remove"],
  summary: "Drops the kept copies of other servers' media older than --days (the links to them stay).",
  usage: "media remove [--days N]",
  positionals: [0, 0],
  options: { days: { type: "string", description: "Age in days of the copies to drop (default 7)" } },
  async run(ctx, { values }, io) {
    const raw = (values.days as string | undefined) ?? "7";
    if (!/^\d{1,5}$/.test(raw)) throw new UsageError(`--days must be a whole number of days, got "${raw}"`);
    const { removeCachedRemoteMedia } = await import("../services/media/remote.ts");
    const olderThan = new Date(Date.now() - Number(raw) * 24 * 60 * 60 * 1000);
    const removed = await removeCachedRemoteMedia(ctx, olderThan, (done) => io.err(`${done} dropped…`));
    io.out(`Dropped ${removed} kept cop${removed === 1 ? "y" : "ies"} of remote media older than ${raw} days.`);
    return 0;
  },
};
