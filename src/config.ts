import { existsSync, readFileSync } from "node:fs";
import { isIP } from "node:net";
import { resolve } from "node:path";
import { parseEnv } from "node:util";
import { findTranscoder, TranscoderConfigError, type Transcoder } from "./media/ffmpeg.ts";
import { defaultProgramLimit } from "./media/program_slots.ts";

/** Raised when the environment describes an impossible configuration; its message names the variable. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

export type ProcessRole = "all" | "web" | "worker";

export interface SmtpConfig {
  host: string;
  port: number;
  user: string | undefined;
  password: string | undefined;
  from: string;
  secure: boolean;
  starttls: "auto" | "always" | "never";
}

export interface Config {
  /** The domain in user handles (`alice@LOCAL_DOMAIN`), with a port when not the default. */
  localDomain: string;
  /** The host that serves the web and the API; defaults to `localDomain`. */
  webDomain: string;
  https: boolean;
  /** `https://webDomain` (or `http://` for local development), without a trailing slash. */
  baseUrl: string;
  port: number;
  bind: string;
  databaseUrl: string;
  redisUrl: string | undefined;
  dataDir: string;
  mediaDir: string;
  mailDir: string;
  smtp: SmtpConfig | undefined;
  limitedFederationMode: boolean;
  authorizedFetch: boolean;
  /** Public API endpoints require a user token (Mastodon's whitelist / limited-federation behaviour). */
  disallowUnauthenticatedApiAccess: boolean;
  /** Translation providers; none configured means translation is off (503). */
  translation: {
    libreTranslateEndpoint: string | undefined;
    libreTranslateApiKey: string | undefined;
    deeplApiKey: string | undefined;
    deeplPlan: "free" | "pro";
  };
  /**
   * Private and loopback addresses outbound fetches (link previews, federation) may reach anyway
   * (ALLOWED_PRIVATE_ADDRESSES, comma-separated IPs or CIDR ranges). Empty: all refused.
   */
  allowedPrivateAddresses: string[];
  /**
   * Fixed addresses for host names in outbound requests, like curl's `--resolve` (OUTBOUND_HOSTS,
   * `name=address` pairs separated by commas): for tests and private networks without DNS. The
   * addresses are still checked against ALLOWED_PRIVATE_ADDRESSES.
   */
  outboundHosts: Record<string, string[]>;
  /**
   * Refuse sign-ups whose e-mail domain has no MX/A/AAAA record (needs outside DNS); off by default
   * when LOCAL_DOMAIN is a loopback host.
   */
  emailDomainDnsCheck: boolean;
  role: ProcessRole;
  logLevel: string;
  /** Where this server's source code is published (AGPL); shown as `source_url`. */
  sourceUrl: string;
  /** Seconds the process waits for in-flight requests and jobs on SIGTERM before it exits anyway. */
  shutdownTimeout: number;
  /**
   * ffmpeg and ffprobe for video, audio and animated GIFs; without them only images are accepted.
   * At most FFMPEG_CONCURRENCY of them run at once in this process (default: the number of cores,
   * at least 2 and at most 8), uploads' checks and conversions together.
   */
  transcoder: Transcoder | undefined;
}

type Env = Record<string, string | undefined>;

const FALSE_WORDS = new Set(["false", "0", "f", "off", "no", "n", ""]);
const TRUE_WORDS = new Set(["true", "1", "t", "on", "yes", "y"]);

function envBoolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined) return fallback;
  const value = raw.trim().toLowerCase();
  if (TRUE_WORDS.has(value)) return true;
  if (FALSE_WORDS.has(value)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function envInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw.trim());
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function envChoice<T extends string>(env: Env, name: string, choices: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = raw.trim().toLowerCase() as T;
  if (!choices.includes(value)) throw new ConfigError(`${name} must be one of ${choices.join(", ")}, got "${raw}"`);
  return value;
}

function envUrl(env: Env, name: string, fallback: string): string {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  try {
    const url = new URL(raw);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error();
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  }
  return raw;
}

function parseAddressList(env: Env, name: string): string[] {
  const raw = env[name]?.trim();
  if (!raw) return [];
  const items = raw.split(/[,\s]+/).filter(Boolean);
  for (const item of items) {
    const [address, bits] = item.split("/");
    const ipv4 = /^\d{1,3}(\.\d{1,3}){3}$/.test(address);
    const ipv6 = address.includes(":") && /^[0-9a-f:.]+$/i.test(address);
    const prefix = bits === undefined ? undefined : Number(bits);
    if (
      (!ipv4 && !ipv6) ||
      (prefix !== undefined && (!Number.isInteger(prefix) || prefix < 0 || prefix > (ipv4 ? 32 : 128)))
    ) {
      throw new ConfigError(`${name} must list IP addresses or CIDR ranges separated by commas, got "${item}"`);
    }
  }
  return items;
}

/** `name=address,name=address` (a name may appear more than once) → addresses by lower-case name. */
function parseHostMap(env: Env, name: string): Record<string, string[]> {
  const raw = env[name]?.trim();
  const map: Record<string, string[]> = {};
  if (!raw) return map;
  for (const item of raw.split(/[,\s]+/).filter(Boolean)) {
    const [host, address, extra] = item.split("=");
    if (extra !== undefined || !host || !address || !HOST_PATTERN.test(host) || host.includes(":") || !isIP(address))
      throw new ConfigError(`${name} must list name=address pairs separated by commas, got "${item}"`);
    (map[host.toLowerCase()] ??= []).push(address);
  }
  return map;
}

const HOST_PATTERN = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?::\d{1,5})?$/i;

/** The IPv6 loopback, bare or bracketed, with an optional port (`::1`, `[::1]`, `[::1]:3000`). */
const IPV6_LOOPBACK = /^(?:::1|\[::1\](?::\d{1,5})?)$/;

function envDomain(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return fallback;
  const value = raw.trim().toLowerCase();
  // The IPv6 loopback is the one address literal a development machine needs; URLs want it bracketed.
  if (IPV6_LOOPBACK.test(value)) return value === "::1" ? "[::1]" : value;
  if (!HOST_PATTERN.test(value)) {
    throw new ConfigError(
      `${name} must be a bare host name such as social.example (optionally with :port), got "${raw}"`,
    );
  }
  return value;
}

/** localhost (and its subdomains), 127.0.0.0/8 or [::1], with or without a port. */
function isLoopbackHost(domain: string): boolean {
  const host = domain.replace(/:\d+$/, "");
  return host === "localhost" || host.endsWith(".localhost") || /^127(\.\d{1,3}){3}$/.test(host) || host === "[::1]";
}

function parseDatabaseUrl(raw: string): string {
  if (raw.startsWith("sqlite:")) {
    if (raw.slice("sqlite:".length).trim() === "")
      throw new ConfigError(`DATABASE_URL "sqlite:" needs a file path, e.g. sqlite:./data/rookery.sqlite`);
    return raw;
  }
  if (raw.startsWith("postgres://") || raw.startsWith("postgresql://")) {
    try {
      new URL(raw);
    } catch {
      throw new ConfigError(`DATABASE_URL is not a valid postgres:// URL`);
    }
    return raw;
  }
  throw new ConfigError(
    `DATABASE_URL must start with sqlite: or postgres://, got "${raw.replace(/\/\/[^@/]*@/, "//***@")}"`,
  );
}

function parseSmtp(env: Env, localDomain: string): SmtpConfig | undefined {
  const host = env.SMTP_SERVER?.trim();
  if (!host) return undefined;
  const port = envInteger(env, "SMTP_PORT", 587, 1, 65535);
  const from = env.SMTP_FROM_ADDRESS?.trim() || `notifications@${localDomain.replace(/:\d+$/, "")}`;
  return {
    host,
    port,
    user: env.SMTP_LOGIN || undefined,
    password: env.SMTP_PASSWORD || undefined,
    from,
    secure: envBoolean(env, "SMTP_SSL", port === 465) || envBoolean(env, "SMTP_TLS", false),
    starttls: envChoice(env, "SMTP_ENABLE_STARTTLS", ["auto", "always", "never"] as const, "auto"),
  };
}

/** Reads `.env` (if present) under the variables already set in `env`; the real environment wins. */
export function environmentWithDotenv(env: Env = process.env, file = resolve(process.cwd(), ".env")): Env {
  if (!existsSync(file)) return env;
  const fromFile = parseEnv(readFileSync(file, "utf8"));
  return { ...fromFile, ...env };
}

/** ffmpeg and ffprobe (FFMPEG_BINARY, FFPROBE_BINARY) and how many may run at once (FFMPEG_CONCURRENCY). */
function transcoderFrom(env: Env): Transcoder | undefined {
  const limit = envInteger(env, "FFMPEG_CONCURRENCY", defaultProgramLimit(), 1, 64);
  try {
    return findTranscoder(env, { limit });
  } catch (error) {
    if (error instanceof TranscoderConfigError) throw new ConfigError(error.message);
    throw error;
  }
}

/** Turns environment variables into a typed configuration, or throws ConfigError naming the bad variable. */
export function loadConfig(env: Env = environmentWithDotenv()): Config {
  const port = envInteger(env, "PORT", 3000, 0, 65535);
  const localDomain = envDomain(env, "LOCAL_DOMAIN", `localhost:${port || 3000}`);
  const webDomain = envDomain(env, "WEB_DOMAIN", localDomain);
  const https = envBoolean(env, "LOCAL_HTTPS", !isLoopbackHost(webDomain));
  const dataDir = resolve(env.ROOKERY_DATA_DIR?.trim() || "./data");
  const databaseUrl = parseDatabaseUrl(env.DATABASE_URL?.trim() || `sqlite:${resolve(dataDir, "rookery.sqlite")}`);
  const redisUrl = env.REDIS_URL?.trim() || undefined;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl))
    throw new ConfigError(`REDIS_URL must start with redis:// or rediss://`);
  const limitedFederationMode =
    envBoolean(env, "LIMITED_FEDERATION_MODE", false) || envBoolean(env, "WHITELIST_MODE", false);
  return {
    localDomain,
    webDomain,
    https,
    baseUrl: `${https ? "https" : "http"}://${webDomain}`,
    port,
    bind: env.BIND?.trim() || "127.0.0.1",
    databaseUrl,
    redisUrl,
    dataDir,
    mediaDir: resolve(env.PAPERCLIP_ROOT_PATH?.trim() || resolve(dataDir, "media")),
    mailDir: resolve(env.ROOKERY_MAIL_DIR?.trim() || resolve(dataDir, "mail")),
    smtp: parseSmtp(env, localDomain),
    limitedFederationMode,
    authorizedFetch:
      envBoolean(env, "AUTHORIZED_FETCH", false) || envBoolean(env, "SECURE_MODE", false) || limitedFederationMode,
    disallowUnauthenticatedApiAccess:
      envBoolean(env, "DISALLOW_UNAUTHENTICATED_API_ACCESS", false) || limitedFederationMode,
    // A development or offline machine (loopback LOCAL_DOMAIN) works without outside DNS unless told otherwise.
    emailDomainDnsCheck: envBoolean(env, "EMAIL_DOMAIN_DNS_CHECK", !isLoopbackHost(localDomain)),
    translation: {
      libreTranslateEndpoint: env.LIBRE_TRANSLATE_ENDPOINT?.trim()
        ? envUrl(env, "LIBRE_TRANSLATE_ENDPOINT", "")
        : undefined,
      libreTranslateApiKey: env.LIBRE_TRANSLATE_API_KEY?.trim() || undefined,
      deeplApiKey: env.DEEPL_API_KEY?.trim() || undefined,
      deeplPlan: envChoice(
        env,
        "DEEPL_PLAN",
        ["free", "pro"] as const,
        env.DEEPL_API_KEY?.trim().endsWith(":fx") ? "free" : "pro",
      ),
    },
    allowedPrivateAddresses: parseAddressList(env, "ALLOWED_PRIVATE_ADDRESSES"),
    outboundHosts: parseHostMap(env, "OUTBOUND_HOSTS"),
    role: envChoice(env, "ROOKERY_ROLE", ["all", "web", "worker"] as const, "all"),
    logLevel: envChoice(
      env,
      "LOG_LEVEL",
      ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const,
      "info",
    ),
    shutdownTimeout: envInteger(env, "SHUTDOWN_TIMEOUT", 25, 1, 3600),
    sourceUrl: envUrl(env, "SOURCE_BASE_URL", "https://github.com/rookery-social/rookery"),
    transcoder: transcoderFrom(env),
  };
}
