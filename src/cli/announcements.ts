import { isIdLike } from "../db/ids.ts";
import { UsageError, type Command } from "./command.ts";

/** The service, loaded when a command runs (not for --help). */
const service = () => import("../services/announcements/announcements.ts");

function timeOption(value: unknown, name: string): Date | undefined {
  if (value === undefined) return undefined;
  const time = new Date(String(value));
  if (Number.isNaN(time.getTime()))
    throw new UsageError(`--${name} must be a date and time (ISO 8601), got "${value}"`);
  return time;
}

export const announcementsCreate: Command = {
  path: ["announcements", "create"],
  summary: "Publishes an announcement to every user (now, or at --publish-at).",
  usage: "announcements create TEXT [--starts-at TIME --ends-at TIME] [--all-day] [--publish-at TIME]",
  positionals: [1, 1],
  options: {
    "starts-at": { type: "string", description: "Start of the event it announces (ISO 8601)" },
    "ends-at": { type: "string", description: "End of that event (ISO 8601)" },
    "all-day": { type: "boolean", description: "The event lasts whole days (clients show dates only)" },
    "publish-at": { type: "string", description: "Publish later, at this time (ISO 8601)" },
  },
  async run(ctx, { positionals, values }, io) {
    const { createAnnouncement } = await service();
    const { ValidationFailed } = await import("../errors.ts");
    try {
      const row = await createAnnouncement(ctx, {
        text: positionals[0],
        startsAt: timeOption(values["starts-at"], "starts-at"),
        endsAt: timeOption(values["ends-at"], "ends-at"),
        allDay: values["all-day"] === true,
        publishAt: timeOption(values["publish-at"], "publish-at"),
      });
      io.out(
        row.published
          ? `Published announcement ${row.id}`
          : `Announcement ${row.id} will be published at ${row.scheduled_at}`,
      );
      return 0;
    } catch (error) {
      if (error instanceof ValidationFailed) throw new UsageError(error.reasons.join("; "));
      throw error;
    }
  },
};

export const announcementsList: Command = {
  path: ["announcements", "list"],
  summary: "Lists the announcements, newest first, with their state.",
  usage: "announcements list [--json]",
  positionals: [0, 0],
  options: { json: { type: "boolean", description: "Print JSON" } },
  async run(ctx, { values }, io) {
    const rows = await (await service()).allAnnouncements(ctx);
    if (values.json) {
      io.out(JSON.stringify(rows, null, 2));
      return 0;
    }
    for (const row of rows) {
      const state = row.published ? `published ${row.published_at}` : `scheduled for ${row.scheduled_at}`;
      const event = row.starts_at ? ` (event ${row.starts_at} – ${row.ends_at}${row.all_day ? ", all day" : ""})` : "";
      io.out(`${row.id}\t${state}${event}\t${row.text.replace(/\s+/g, " ").slice(0, 80)}`);
    }
    return 0;
  },
};

export const announcementsRemove: Command = {
  path: ["announcements", "remove"],
  summary: "Removes an announcement (clients drop it at once).",
  usage: "announcements remove ID",
  positionals: [1, 1],
  options: {},
  async run(ctx, { positionals }, io) {
    const id = positionals[0];
    if (!isIdLike(id)) throw new UsageError(`"${id}" is not an announcement ID`);
    const { NotFound } = await import("../errors.ts");
    try {
      await (await service()).removeAnnouncement(ctx, id);
    } catch (error) {
      if (error instanceof NotFound) {
        io.err(`No announcement ${id}`);
        return 1;
      }
      throw error;
    }
    io.out(`Removed announcement ${id}`);
    return 0;
  },
};
