/** Runs `rookery` commands in-process against a test server's context, as the CLI tests do. */
import assert from "node:assert/strict";
import { runCli, type ContextFactory } from "../src/cli/main.ts";
import type { TestServer } from "./kit.ts";

export interface CliResult {
  code: number;
  out: string[];
  err: string[];
  /** How many times the command asked for a context (i.e. got past argument parsing). */
  opened: number;
}

/** Runs `rookery ARGV` against the test server's context, capturing what it prints. */
export async function cli(server: TestServer, ...argv: string[]): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  let opened = 0;
  let released = 0;
  const factory: ContextFactory = async () => {
    opened++;
    return { ctx: server.ctx, release: async () => void released++ };
  };
  const code = await runCli(argv, { out: (line) => void out.push(line), err: (line) => void err.push(line) }, factory);
  assert.equal(released, opened, "every opened context is released");
  return { code, out, err, opened };
}
