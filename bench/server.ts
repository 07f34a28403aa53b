/**
 * What the benchmark scripts share to load the real server: starting `node src/main.ts` as a child
 * process on an ephemeral port, firing autocannon at it, and reading CPU time from /proc.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createWriteStream, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import autocannon, { type Result } from "autocannon";
import type { WriteStream } from "node:fs";
import { REPO_ROOT } from "./common.ts";

/** Stops a server or worker process: SIGTERM, SIGKILL after 30 s; then closes its log. */
export async function stopChild(
  child: ChildProcess,
  exited: Promise<unknown>,
  log: WriteStream,
  killOnExit: () => void,
): Promise<void> {
  if (child.exitCode === null) {
    child.kill("SIGTERM");
    const hard = setTimeout(() => child.kill("SIGKILL"), 30_000);
    await exited;
    clearTimeout(hard);
  }
  process.off("exit", killOnExit);
  await new Promise<void>((resolve) => log.end(resolve));
}

/** One request of a scenario. */
export interface Request {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

// ---------------------------------------------------------------------------------------------
// Server

export interface LoggedProblem {
  at: number;
  level: number;
  msg: string;
  line: string;
}

export interface Server {
  child: ChildProcess;
  port: number;
  logFile: string;
  problems: LoggedProblem[];
  stop(): Promise<void>;
}

/** Starts `node src/main.ts` and resolves once its "Rookery is serving" log line names the port. */
export async function startServer(dir: string, serverEnv: Record<string, string>, logLevel: string): Promise<Server> {
  const logFile = join(dir, "server.log");
  const log = createWriteStream(logFile, { flags: "w" });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? dir,
    ...serverEnv,
    PORT: "0",
    BIND: "127.0.0.1",
    LOG_LEVEL: logLevel,
  };
  // The data directory as working directory: a developer's .env in the repository stays out.
  const child = spawn(process.execPath, [join(REPO_ROOT, "src", "main.ts")], {
    cwd: dir,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const killOnExit = () => child.kill("SIGKILL");
  process.on("exit", killOnExit);
  const problems: LoggedProblem[] = [];
  let pending = "";
  let resolvePort!: (port: number) => void;
  const portFound = new Promise<number>((resolve) => (resolvePort = resolve));

  child.stdout!.pipe(log, { end: false });
  child.stderr!.pipe(log, { end: false });
  const stderrTail: string[] = [];
  child.stderr!.on("data", (chunk: Buffer) => {
    stderrTail.push(chunk.toString());
    if (stderrTail.length > 20) stderrTail.shift();
  });
  child.stdout!.on("data", (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      // Parse only what matters: the start-up line and warnings or worse (level ≥ 40).
      const serving = line.includes("Rookery is serving");
      if (!serving && !/"level":(4|5|6)\d/.test(line)) continue;
      try {
        const entry = JSON.parse(line) as { level: number; msg?: string; port?: number; time?: number };
        if (serving && typeof entry.port === "number") resolvePort(entry.port);
        if (entry.level >= 40)
          problems.push({ at: entry.time ?? Date.now(), level: entry.level, msg: entry.msg ?? "", line });
      } catch {
        // not JSON: ignore
      }
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));

  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>(
    (_, reject) =>
      (timer = setTimeout(() => reject(new Error(`the server did not start within 60 s; see ${logFile}`)), 60_000)),
  );
  const early = exited.then((code) => {
    throw new Error(
      `the server exited during start-up (code ${code}): ${stderrTail.join("").trim() || `see ${logFile}`}`,
    );
  });
  let port: number;
  try {
    port = await Promise.race([portFound, early, timeout]);
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  } finally {
    clearTimeout(timer);
  }

  return {
    child,
    port,
    logFile,
    problems,
    stop: () => stopChild(child, exited, log, killOnExit),
  };
}

// ---------------------------------------------------------------------------------------------
// CPU accounting (Linux /proc): where the time went during a scenario

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of a process, in seconds, and its command name. */
export function processCpu(pid: number | string): { comm: string; seconds: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = stat.lastIndexOf(")");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const fields = stat.slice(close + 2).split(" ");
    return { comm, seconds: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS };
  } catch {
    return undefined;
  }
}

/** CPU seconds of every PostgreSQL process on the machine (all its databases, not only ours). */
export function postgresCpu(): number {
  let total = 0;
  try {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const cpu = processCpu(entry);
      if (cpu?.comm === "postgres") total += cpu.seconds;
    }
  } catch {
    return Number.NaN;
  }
  return total;
}

export async function fire(
  port: number,
  connections: number,
  duration: number,
  next: () => Request,
  samples?: Record<string, string[]>,
  errors?: string[],
  onTick?: (requests: number) => void,
): Promise<Result> {
  const instance = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration,
    timeout: 10,
    requests: [
      {
        setupRequest: (request) => {
          const r = next();
          return {
            ...request,
            method: r.method ?? "GET",
            path: r.path,
            headers: { ...request.headers, ...r.headers },
            body: r.body,
          };
        },
        onResponse: samples
          ? (status, body) => {
              if (status >= 200 && status < 300) return;
              const list = (samples[status] ??= []);
              if (list.length < 3) list.push(body.slice(0, 300));
            }
          : undefined,
      },
    ],
  });
  if (errors) {
    instance.on("reqError", (error: Error) => {
      if (errors.length < 5) errors.push(error.message);
    });
  }
  let total = 0;
  if (onTick) {
    instance.on("tick", (tick: { counter: number }) => {
      total += tick.counter;
      onTick(total);
    });
  }
  return instance;
}

/**
 * `text` with the block between `<!-- bench:KEY:begin -->` and `<!-- bench:KEY:end -->` replaced by
 * `section`; a missing block is added before the marker `before` (when present) or at the end.
 */
export function replaceMarkedSection(text: string, key: string, section: string, before?: string): string {
  const begin = `<!-- bench:${key}:begin -->`;
  const end = `<!-- bench:${key}:end -->`;
  const block = `${begin}\n${section}\n${end}`;
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from !== -1 && to > from) return text.slice(0, from) + block + text.slice(to + end.length);
  const at = before ? text.indexOf(before) : -1;
  if (at !== -1) return `${text.slice(0, at)}${block}\n\n${text.slice(at)}`;
  return `${text.trimEnd()}\n\n${block}\n`;
}
