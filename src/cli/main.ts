// Only light modules at the top: `--help`, usage errors and `--version` must not load the database
// drivers, Fastify or sharp. Each command imports what it needs when it runs; boot is imported below.
import { ConfigError, loadConfig } from "../config.ts";
import type { Ctx } from "../context.ts";
import { ROOKERY_VERSION } from "../version.ts";
import { accountsCreate, accountsDelete, accountsModify } from "./accounts.ts";
import { rolesCreate, rolesList, rolesModify, rolesRemove } from "./roles.ts";
import { helpText, parseCommandArgs, UsageError, type Command, type Output } from "./command.ts";
import { dbMigrate } from "./db.ts";
import { emailDomainBlocksAdd, emailDomainBlocksList, emailDomainBlocksRemove } from "./email_domain_blocks.ts";
import { domainBlocksAdd, domainBlocksList, domainBlocksRemove } from "./domain_blocks.ts";
import { domainAllowsAdd, domainAllowsList, domainAllowsRemove } from "./domain_allows.ts";
import { announcementsCreate, announcementsList, announcementsRemove } from "./announcements.ts";
import { emojiDisable, emojiEnable, emojiImport, emojiList, emojiRemove } from "./emoji.ts";
import { mediaRemove } from "./media.ts";
import { settingsGet, settingsList, settingsSet } from "./settings.ts";
import { tokensCreate } from "./tokens.ts";

export const COMMANDS: readonly Command[] = [
  accountsCreate,
  accountsModify,
  accountsDelete,
  rolesList,
  rolesCreate,
  rolesModify,
  rolesRemove,
  tokensCreate,
  settingsList,
  settingsGet,
  settingsSet,
  emailDomainBlocksList,
  emailDomainBlocksAdd,
  emailDomainBlocksRemove,
  domainBlocksList,
  domainBlocksAdd,
  domainBlocksRemove,
  domainAllowsList,
  domainAllowsAdd,
  domainAllowsRemove,
  announcementsCreate,
  announcementsList,
  announcementsRemove,
  emojiImport,
  emojiList,
  emojiRemove,
  emojiDisable,
  emojiEnable,
  mediaRemove,
  dbMigrate,
];

function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.path.join(" ").length));
  const lines = COMMANDS.map(
    (c) => `  ${c.path.join(" ").padEnd(width)}  ${c.summary.split(". ")[0].replace(/\.$/, "")}`,
  );
  return `Usage: rookery COMMAND [options]\n\nAdministers a Rookery server (configured by the same environment and .env as the server).\n\nCommands:\n${lines.join("\n")}\n\nRun \`rookery COMMAND --help\` for a command's options. \`rookery --version\` prints the version.\n`;
}

function groupHelp(group: string): string {
  const lines = COMMANDS.filter((c) => c.path[0] === group).map((c) => `  rookery ${c.usage}\n      ${c.summary}`);
  return `Commands of rookery ${group}:\n${lines.join("\n")}\n`;
}

/** Opens the context a command runs against, and releases it afterwards. */
export type ContextFactory = (command: Command) => Promise<{ ctx: Ctx; release(): Promise<void> }>;

/** Reads the environment like the server does; closes the database when the command ends. */
const defaultContext: ContextFactory = async (command) => {
  const config = loadConfig();
  const [{ boot }, { pino }] = await Promise.all([import("../boot.ts"), import("pino")]);
  const log = pino({ level: "warn" }, pino.destination(2));
  // Commands only enqueue jobs; the workers that run them register the handlers.
  const ctx = await boot(config, { migrate: command !== dbMigrate, log, jobHandlers: false });
  return {
    ctx,
    release: async () => {
      await ctx.events.close();
      await ctx.db.close();
    },
  };
};

/** boot.ts's StartupError, recognized without importing boot.ts (and everything it loads). */
const isStartupError = (error: unknown): error is Error => error instanceof Error && error.name === "StartupError";

/** Runs one CLI invocation; returns the exit status. */
export async function runCli(
  argv: string[],
  io: Output,
  openContext: ContextFactory = defaultContext,
): Promise<number> {
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h" || argv[0] === "help") {
    io.out(overview());
    return argv.length === 0 ? 1 : 0;
  }
  if (argv[0] === "--version" || argv[0] === "-v") {
    io.out(ROOKERY_VERSION);
    return 0;
  }
  const command = COMMANDS.find((c) => c.path.every((word, i) => argv[i] === word));
  if (!command) {
    const group = COMMANDS.some((c) => c.path[0] === argv[0]);
    if (group && (argv.length === 1 || argv[1] === "--help")) {
      io.out(groupHelp(argv[0]));
      return argv.length === 1 ? 1 : 0;
    }
    io.err(`rookery: unknown command "${argv.slice(0, 2).join(" ")}"\n\n${overview()}`);
    return 1;
  }
  let opened: Awaited<ReturnType<ContextFactory>> | undefined;
  try {
    const args = parseCommandArgs(command, argv.slice(command.path.length));
    if (args.help) {
      io.out(helpText(command));
      return 0;
    }
    opened = await openContext(command);
    return await command.run(opened.ctx, args, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`rookery ${command.path.join(" ")}: ${error.message}\n\n${helpText(command)}`);
      return 1;
    }
    if (error instanceof ConfigError || isStartupError(error)) {
      io.err(`rookery: ${error instanceof ConfigError ? "configuration error: " : ""}${error.message}`);
      return 1;
    }
    throw error;
  } finally {
    await opened?.release();
  }
}
