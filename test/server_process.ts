/**
 * `node src/main.ts` as a child process, for tests of real server processes: its pino lines parsed,
 * waits for a line or for the exit with a deadline, so a hung child fails the test instead of hanging it.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
const MAIN = join(ROOT, "src", "main.ts");
/** How long a child may take to reach a point before the test fails (and the child is killed). */
export const WAIT_MS = 20_000;

export type LogLine = Record<string, unknown> & { msg?: string };

/** `node src/main.ts` as a child process, with its stdout parsed as pino JSON lines. */
export class ServerProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly lines: LogLine[] = [];
  stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  #waiters: Array<() => void> = [];
  #closed = false;

  constructor(env: Record<string, string>) {
    this.child = spawn(process.execPath, [MAIN], { cwd: ROOT, env, stdio: ["pipe", "pipe", "pipe"] });
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      try {
        this.lines.push(JSON.parse(line) as LogLine);
      } catch {
        this.lines.push({ msg: line, unparsed: true });
      }
      for (const wake of this.#waiters.splice(0)) wake();
    });
    this.child.stderr.setEncoding("utf8").on("data", (chunk: string) => (this.stderr += chunk));
    // "close", not "exit": it comes after stdout and stderr have been read to the end.
    this.exited = new Promise((resolve) => this.child.on("close", (code, signal) => resolve({ code, signal })));
    void this.exited.then(() => {
      this.#closed = true;
      for (const wake of this.#waiters.splice(0)) wake();
    });
  }

  /** Until the process has exited and its output has been read to the end. */
  get running(): boolean {
    return !this.#closed;
  }

  /** The first log line matching `predicate`; fails after WAIT_MS or when the process exits first. */
  async waitForLine(predicate: (line: LogLine) => boolean, what: string): Promise<LogLine> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const found = this.lines.find(predicate);
      if (found) return found;
      if (!this.running)
        assert.fail(`the process exited before ${what}; stdout: ${JSON.stringify(this.lines)}; stderr: ${this.stderr}`);
      const left = deadline - Date.now();
      if (left <= 0)
        assert.fail(`timed out waiting for ${what}; stdout: ${JSON.stringify(this.lines)}; stderr: ${this.stderr}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The exit of the process; fails (and kills it) when it does not exit within WAIT_MS. */
  async exit(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.child.kill("SIGKILL");
        reject(
          new Error(
            `the process did not exit within ${WAIT_MS} ms; stdout: ${JSON.stringify(this.lines)}; stderr: ${this.stderr}`,
          ),
        );
      }, WAIT_MS);
    });
    try {
      return await Promise.race([this.exited, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
