import { parseArgs } from "node:util";
import type { Ctx } from "../context.ts";

export interface OptionSpec {
  type: "string" | "boolean";
  description: string;
}
export type Options = Record<string, OptionSpec>;

/** Where a command writes; tests pass their own. */
export interface Output {
  out(line: string): void;
  err(line: string): void;
}

export interface ParsedArgs {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/** One CLI command: its words (`accounts create`), its help, its options and what it does. */
export interface Command {
  path: readonly string[];
  summary: string;
  /** Usage after `rookery`, e.g. `accounts create USERNAME --email EMAIL [options]`. */
  usage: string;
  options: Options;
  /** How many positional arguments it takes, at least and at most. */
  positionals: readonly [number, number];
  run(ctx: Ctx, args: ParsedArgs, io: Output): Promise<number>;
}

/** Raised for a wrong invocation; the message is printed with the command's usage. */
export class UsageError extends Error {
  override name = "UsageError";
}

export function helpText(command: Command): string {
  const lines = Object.entries(command.options).map(([name, option]) => {
    const flag = `--${name}${option.type === "string" ? " VALUE" : ""}`;
    return `  ${flag.padEnd(28)} ${option.description}`;
  });
  lines.push(`  ${"--help".padEnd(28)} Show this help`);
  return `Usage: rookery ${command.usage}\n\n${command.summary}\n\nOptions:\n${lines.join("\n")}\n`;
}

export function parseCommandArgs(command: Command, argv: string[]): ParsedArgs & { help: boolean } {
  const options: Record<string, { type: "string" | "boolean" }> = { help: { type: "boolean" } };
  for (const [name, option] of Object.entries(command.options)) options[name] = { type: option.type };
  let parsed: ParsedArgs;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true }) as ParsedArgs;
  } catch (error) {
    throw new UsageError((error as Error).message.replace(/\. To specify a positional argument.*$/s, ""));
  }
  const help = parsed.values.help === true;
  const [min, max] = command.positionals;
  if (!help && (parsed.positionals.length < min || parsed.positionals.length > max)) {
    throw new UsageError(
      parsed.positionals.length < min ? "missing argument" : `unexpected argument "${parsed.positionals[max]}"`,
    );
  }
  return { ...parsed, help };
}
