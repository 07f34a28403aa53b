/**
 * `node src/main.ts` as a child process, for tests of real server processes: its pino lines parsed,
 * waits for a line or for the exit with a deadline, so a hung child fails the test instead of hanging it.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { TEST_ENGINE } from "./kit.ts";

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

  /** What the process wrote, for failure messages. */
  output(): string {
    return `stdout: ${JSON.stringify(this.lines)}; stderr: ${this.stderr}`;
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

/**
 * Server processes for one test file: each environment a fresh data directory and, on PostgreSQL,
 * a fresh database of its own (a database rather than a schema: the migrator must see only its
 * own), with nothing from the developer's shell; `cleanUp` kills what still runs and removes them.
 */
export class ServerProcesses {
  readonly #children: ServerProcess[] = [];
  readonly #dirs: string[] = [];
  readonly #databases: string[] = [];
  readonly #pgUrl = process.env.TEST_DATABASE_URL;

  async #pg(text: string): Promise<void> {
    const client = new pg.Client({ connectionString: this.#pgUrl });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  }

  async environment(extra: Record<string, string> = {}, options = { database: true }): Promise<Record<string, string>> {
    const dataDir = this.tempDir("rookery-process-");
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      PORT: "0",
      BIND: "127.0.0.1",
      ROOKERY_DATA_DIR: dataDir,
      LOG_LEVEL: "info",
    };
    if (TEST_ENGINE === "postgres" && this.#pgUrl && options.database) {
      const database = `rookery_process_${randomBytes(6).toString("hex")}`;
      this.#databases.push(database);
      await this.#pg(`CREATE DATABASE "${database}"`);
      const url = new URL(this.#pgUrl);
      url.pathname = `/${database}`;
      env.DATABASE_URL = url.toString();
    }
    return { ...env, ...extra };
  }

  /** A temporary folder removed by `cleanUp`. */
  tempDir(prefix: string): string {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    this.#dirs.push(dir);
    return dir;
  }

  start(env: Record<string, string>): ServerProcess {
    const child = new ServerProcess(env);
    this.#children.push(child);
    return child;
  }

  async cleanUp(): Promise<void> {
    for (const child of this.#children) if (child.running) child.child.kill("SIGKILL");
    await Promise.all(this.#children.map((c) => c.exited));
    for (const dir of this.#dirs) rmSync(dir, { recursive: true, force: true });
    for (const database of this.#databases) await this.#pg(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  }
}
