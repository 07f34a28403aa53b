import type { Command } from "./command.ts";

export const dbMigrate: Command = {
  path: ["db", "migrate"],
  summary: "Applies pending database migrations (the server also does this when it starts).",
  usage: "db migrate",
  positionals: [0, 0],
  options: {},
  async run(ctx, _args, io) {
    const { migrateToLatest } = await import("../db/migrate.ts");
    const applied = await migrateToLatest(ctx.db);
    io.out(applied.length === 0 ? "Database is up to date" : `Applied ${applied.join(", ")}`);
    return 0;
  },
};
