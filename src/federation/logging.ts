/**
 * Fedify logs through LogTape; these lines go to Rookery's logger (pino), under the logger's own
 * level, with Fedify's category (`fedify.sig.http`, `fedify.federation.outbox`, …) as a field.
 * LogTape is configured once per process: the first context's logger wins.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { configure, type LogLevel, type LogRecord } from "@logtape/logtape";
import type { FastifyBaseLogger } from "fastify";

let configured: Promise<void> | undefined;

const LEVELS: Record<LogLevel, "trace" | "debug" | "info" | "warn" | "error" | "fatal"> = {
  trace: "trace",
  debug: "debug",
  info: "info",
  warning: "warn",
  error: "error",
  fatal: "fatal",
};

/** The record's message with its values in place (LogTape keeps them apart). */
function textOf(record: LogRecord): string {
  return record.message
    .map((part, i) => (i % 2 === 0 ? String(part) : typeof part === "string" ? part : JSON.stringify(part)))
    .join("");
}

export function routeFedifyLogs(log: FastifyBaseLogger): Promise<void> {
  configured ??= configure({
    sinks: {
      rookery: (record: LogRecord) => {
        const level = LEVELS[record.level];
        const { error, ...properties } = record.properties as { error?: unknown };
        log[level]({ category: record.category.join("."), ...properties, err: error }, textOf(record));
      },
    },
    loggers: [
      // Fedify's info lines carry whole activities: only with LOG_LEVEL=debug.
      {
        category: ["fedify"],
        sinks: ["rookery"],
        lowestLevel: log.level === "debug" || log.level === "trace" ? "debug" : "warning",
      },
      // A handle or link another server cannot resolve is its problem (and any signed-in user's
      // search can ask for one): Fedify's WebFinger client says so at error level; debug only here.
      {
        category: ["fedify", "webfinger"],
        sinks: ["rookery"],
        parentSinks: "override",
        lowestLevel: log.level === "debug" || log.level === "trace" ? "debug" : "fatal",
      },
      { category: ["logtape", "meta"], sinks: [], lowestLevel: "error" },
    ],
    contextLocalStorage: new AsyncLocalStorage(),
  }).catch((error: unknown) => log.warn({ err: error }, "could not route Fedify's logs"));
  return configured;
}
