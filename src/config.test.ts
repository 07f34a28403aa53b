import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, test } from "node:test";
import { ConfigError, environmentWithDotenv, loadConfig } from "./config.ts";
import { defaultProgramLimit } from "./media/program_slots.ts";

/** The ConfigError `loadConfig(env)` throws (fails the test when it throws nothing or something else). */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail(`loadConfig(${JSON.stringify(env)}) did not throw`);
}

describe("loadConfig", () => {
  test("defaults: localhost:3000 over http, SQLite under the data directory, role all", () => {
    const config = loadConfig({});
    const dataDir = resolve(process.cwd(), "data");
    assert.equal(config.localDomain, "localhost:3000");
    assert.equal(config.webDomain, "localhost:3000");
    assert.equal(config.https, false);
    assert.equal(config.baseUrl, "http://localhost:3000");
    assert.equal(config.port, 3000);
    assert.equal(config.bind, "127.0.0.1");
    assert.equal(config.dataDir, dataDir);
    assert.equal(config.databaseUrl, `sqlite:${join(dataDir, "rookery.sqlite")}`);
    assert.equal(config.mediaDir, join(dataDir, "media"));
    assert.equal(config.mailDir, join(dataDir, "mail"));
    assert.equal(config.redisUrl, undefined);
    assert.equal(config.smtp, undefined);
    assert.equal(config.limitedFederationMode, false);
    assert.equal(config.authorizedFetch, false);
    assert.equal(config.disallowUnauthenticatedApiAccess, false);
    assert.equal(config.role, "all");
    assert.equal(config.logLevel, "info");
    assert.equal(config.shutdownTimeout, 25);
    assert.equal(config.sourceUrl, "https://github.com/rookery-social/rookery");
  });

  test("ROOKERY_DATA_DIR moves the default database, media and mail", () => {
    const config = loadConfig({ ROOKERY_DATA_DIR: "/srv/rookery" });
    assert.equal(config.dataDir, "/srv/rookery");
    assert.equal(config.databaseUrl, "sqlite:/srv/rookery/rookery.sqlite");
    assert.equal(config.mediaDir, "/srv/rookery/media");
    assert.equal(config.mailDir, "/srv/rookery/mail");
    const moved = loadConfig({
      ROOKERY_DATA_DIR: "/srv/rookery",
      PAPERCLIP_ROOT_PATH: "/mnt/media",
      ROOKERY_MAIL_DIR: "/var/mail/rookery",
    });
    assert.equal(moved.mediaDir, "/mnt/media");
    assert.equal(moved.mailDir, "/var/mail/rookery");
  });

  test("PORT changes the port and the default LOCAL_DOMAIN (but not an explicit one)", () => {
    const config = loadConfig({ PORT: "4000" });
    assert.equal(config.port, 4000);
    assert.equal(config.localDomain, "localhost:4000");
    assert.equal(config.baseUrl, "http://localhost:4000");
    // PORT=0 (any free port) keeps the documented default domain.
    const any = loadConfig({ PORT: "0" });
    assert.equal(any.port, 0);
    assert.equal(any.localDomain, "localhost:3000");
    const explicit = loadConfig({ PORT: "4000", LOCAL_DOMAIN: "social.example" });
    assert.equal(explicit.localDomain, "social.example");
    assert.equal(explicit.port, 4000);
  });

  test("a public LOCAL_DOMAIN defaults to https; WEB_DOMAIN moves the base URL but not the handle domain", () => {
    const pub = loadConfig({ LOCAL_DOMAIN: "Social.Example" });
    assert.equal(pub.localDomain, "social.example");
    assert.equal(pub.webDomain, "social.example");
    assert.equal(pub.https, true);
    assert.equal(pub.baseUrl, "https://social.example");

    const split = loadConfig({ LOCAL_DOMAIN: "example.com", WEB_DOMAIN: "social.example.com" });
    assert.equal(split.localDomain, "example.com");
    assert.equal(split.webDomain, "social.example.com");
    assert.equal(split.baseUrl, "https://social.example.com");

    // Loopback names stay on http.
    for (const domain of ["localhost", "dev.localhost:8080", "127.0.0.1:3000"]) {
      assert.equal(loadConfig({ LOCAL_DOMAIN: domain }).https, false, domain);
    }
    // https is decided by the web domain.
    assert.equal(
      loadConfig({ LOCAL_DOMAIN: "example.com", WEB_DOMAIN: "localhost:3000" }).baseUrl,
      "http://localhost:3000",
    );
  });

  test("LOCAL_HTTPS overrides the default either way", () => {
    assert.equal(loadConfig({ LOCAL_HTTPS: "true" }).baseUrl, "https://localhost:3000");
    assert.equal(loadConfig({ LOCAL_HTTPS: "yes" }).https, true);
    assert.equal(loadConfig({ LOCAL_DOMAIN: "social.example", LOCAL_HTTPS: "false" }).baseUrl, "http://social.example");
    assert.equal(loadConfig({ LOCAL_DOMAIN: "social.example", LOCAL_HTTPS: "0" }).https, false);
    assert.match(
      configError({ LOCAL_HTTPS: "sometimes" }).message,
      /^LOCAL_HTTPS must be true or false, got "sometimes"$/,
    );
  });

  test("DATABASE_URL accepts sqlite:, postgres:// and postgresql://", () => {
    assert.equal(
      loadConfig({ DATABASE_URL: "sqlite:/var/lib/rookery/db.sqlite" }).databaseUrl,
      "sqlite:/var/lib/rookery/db.sqlite",
    );
    assert.equal(loadConfig({ DATABASE_URL: "sqlite::memory:" }).databaseUrl, "sqlite::memory:");
    assert.equal(
      loadConfig({ DATABASE_URL: " postgres://rookery:secret@db:5432/rookery " }).databaseUrl,
      "postgres://rookery:secret@db:5432/rookery",
    );
    assert.equal(loadConfig({ DATABASE_URL: "postgresql://db/rookery" }).databaseUrl, "postgresql://db/rookery");
    // An explicit DATABASE_URL wins over the data directory's default file.
    assert.equal(
      loadConfig({ ROOKERY_DATA_DIR: "/srv/x", DATABASE_URL: "postgres://db/x" }).databaseUrl,
      "postgres://db/x",
    );
  });

  test("a bad DATABASE_URL is a ConfigError naming DATABASE_URL without echoing the password", () => {
    const mysql = configError({ DATABASE_URL: "mysql://rookery:hunter2@db:3306/rookery" });
    assert.match(mysql.message, /DATABASE_URL/);
    assert.doesNotMatch(mysql.message, /hunter2/);
    assert.match(mysql.message, /\*\*\*@db:3306\/rookery/, "the rest of the URL is shown, the credentials masked");

    const empty = configError({ DATABASE_URL: "sqlite:" });
    assert.match(empty.message, /DATABASE_URL/);

    const broken = configError({ DATABASE_URL: "postgres://rookery:hunter2@[not-a-host/x" });
    assert.match(broken.message, /DATABASE_URL/);
    assert.doesNotMatch(broken.message, /hunter2/);

    assert.match(
      configError({ DATABASE_URL: "rookery.sqlite" }).message,
      /DATABASE_URL must start with sqlite: or postgres:\/\//,
    );
  });

  test("a bad DATABASE_URL whose password contains a colon is not echoed either", () => {
    const error = configError({ DATABASE_URL: "mysql://rookery:s3cr:et@db/rookery" });
    assert.match(error.message, /DATABASE_URL/);
    assert.doesNotMatch(error.message, /s3cr|et@/);
  });

  test("bad PORT values name PORT", () => {
    assert.equal(configError({ PORT: "abc" }).message, 'PORT must be a whole number, got "abc"');
    assert.match(configError({ PORT: "-1" }).message, /^PORT must be a whole number/);
    assert.match(configError({ PORT: "3000.5" }).message, /^PORT /);
    assert.equal(configError({ PORT: "65536" }).message, "PORT must be between 0 and 65535, got 65536");
    // Blank means the default.
    assert.equal(loadConfig({ PORT: " " }).port, 3000);
  });

  test("booleans: the usual words, and anything else names the variable", () => {
    for (const word of ["true", "TRUE", "1", "t", "on", "yes", "y", " yes "]) {
      assert.equal(loadConfig({ AUTHORIZED_FETCH: word }).authorizedFetch, true, word);
    }
    for (const word of ["false", "0", "f", "off", "no", "n", ""]) {
      assert.equal(loadConfig({ AUTHORIZED_FETCH: word }).authorizedFetch, false, word);
    }
    assert.equal(
      configError({ LIMITED_FEDERATION_MODE: "maybe" }).message,
      'LIMITED_FEDERATION_MODE must be true or false, got "maybe"',
    );
    assert.match(
      configError({ DISALLOW_UNAUTHENTICATED_API_ACCESS: "2" }).message,
      /^DISALLOW_UNAUTHENTICATED_API_ACCESS /,
    );
    assert.match(configError({ AUTHORIZED_FETCH: "enabled" }).message, /^AUTHORIZED_FETCH /);
  });

  test("LIMITED_FEDERATION_MODE (or WHITELIST_MODE) implies AUTHORIZED_FETCH and DISALLOW_UNAUTHENTICATED_API_ACCESS", () => {
    for (const env of [{ LIMITED_FEDERATION_MODE: "true" }, { WHITELIST_MODE: "true" }]) {
      const config = loadConfig(env);
      assert.equal(config.limitedFederationMode, true);
      assert.equal(config.authorizedFetch, true);
      assert.equal(config.disallowUnauthenticatedApiAccess, true);
    }
    // Even an explicit "false" for the implied ones does not weaken limited federation.
    const forced = loadConfig({
      LIMITED_FEDERATION_MODE: "true",
      AUTHORIZED_FETCH: "false",
      DISALLOW_UNAUTHENTICATED_API_ACCESS: "false",
    });
    assert.equal(forced.authorizedFetch, true);
    assert.equal(forced.disallowUnauthenticatedApiAccess, true);
    // Each of the implied ones alone does not turn on limited federation.
    const fetchOnly = loadConfig({ AUTHORIZED_FETCH: "true" });
    assert.deepEqual(
      [fetchOnly.limitedFederationMode, fetchOnly.authorizedFetch, fetchOnly.disallowUnauthenticatedApiAccess],
      [false, true, false],
    );
    assert.equal(loadConfig({ SECURE_MODE: "true" }).authorizedFetch, true);
    const apiOnly = loadConfig({ DISALLOW_UNAUTHENTICATED_API_ACCESS: "true" });
    assert.deepEqual(
      [apiOnly.limitedFederationMode, apiOnly.authorizedFetch, apiOnly.disallowUnauthenticatedApiAccess],
      [false, false, true],
    );
  });

  test("ROOKERY_ROLE, LOG_LEVEL, SHUTDOWN_TIMEOUT and SOURCE_BASE_URL", () => {
    assert.equal(loadConfig({ ROOKERY_ROLE: "web" }).role, "web");
    assert.equal(loadConfig({ ROOKERY_ROLE: "Worker" }).role, "worker");
    assert.equal(
      configError({ ROOKERY_ROLE: "sidekiq" }).message,
      'ROOKERY_ROLE must be one of all, web, worker, got "sidekiq"',
    );
    assert.equal(loadConfig({ LOG_LEVEL: "debug" }).logLevel, "debug");
    assert.match(configError({ LOG_LEVEL: "loud" }).message, /^LOG_LEVEL must be one of /);
    assert.equal(loadConfig({ SHUTDOWN_TIMEOUT: "5" }).shutdownTimeout, 5);
    assert.match(configError({ SHUTDOWN_TIMEOUT: "0" }).message, /^SHUTDOWN_TIMEOUT must be between 1 and 3600/);
    assert.equal(
      loadConfig({ SOURCE_BASE_URL: "https://git.example/rookery" }).sourceUrl,
      "https://git.example/rookery",
    );
    assert.match(
      configError({ SOURCE_BASE_URL: "ftp://git.example/rookery" }).message,
      /^SOURCE_BASE_URL must be an http\(s\) URL/,
    );
    assert.match(configError({ SOURCE_BASE_URL: "not a url" }).message, /^SOURCE_BASE_URL /);
    assert.equal(loadConfig({ BIND: "0.0.0.0" }).bind, "0.0.0.0");
  });

  test("FFMPEG_CONCURRENCY: how many ffmpeg/ffprobe programs run at once, by default as the cores allow", () => {
    const programs = { FFMPEG_BINARY: "/bin/true", FFPROBE_BINARY: "/bin/true" };
    assert.equal(loadConfig(programs).transcoder?.slots.limit, defaultProgramLimit());
    assert.equal(loadConfig({ ...programs, FFMPEG_CONCURRENCY: "3" }).transcoder?.slots.limit, 3);
    assert.equal(
      configError({ FFMPEG_CONCURRENCY: "0" }).message,
      "FFMPEG_CONCURRENCY must be between 1 and 64, got 0",
    );
    assert.match(configError({ FFMPEG_CONCURRENCY: "two" }).message, /^FFMPEG_CONCURRENCY must be a whole number/);
  });

  test("LOCAL_DOMAIN and WEB_DOMAIN must be bare host names", () => {
    for (const bad of [
      "https://social.example",
      "social.example/path",
      "user@social.example",
      "social example",
      "-bad.example",
      "social.example:port",
    ]) {
      const error = configError({ LOCAL_DOMAIN: bad });
      assert.match(error.message, /^LOCAL_DOMAIN must be a bare host name/, bad);
      assert.ok(error.message.includes(bad), bad);
    }
    assert.match(configError({ WEB_DOMAIN: "https://web.example" }).message, /^WEB_DOMAIN /);
    assert.equal(loadConfig({ LOCAL_DOMAIN: "social.example:8443" }).localDomain, "social.example:8443");
  });

  test("REDIS_URL must be redis:// or rediss://", () => {
    assert.equal(loadConfig({ REDIS_URL: "redis://localhost:6379/0" }).redisUrl, "redis://localhost:6379/0");
    assert.equal(loadConfig({ REDIS_URL: "rediss://cache.example:6380" }).redisUrl, "rediss://cache.example:6380");
    assert.equal(loadConfig({ REDIS_URL: "" }).redisUrl, undefined);
    for (const bad of ["http://localhost:6379", "localhost:6379"]) {
      assert.equal(configError({ REDIS_URL: bad }).message, "REDIS_URL must start with redis:// or rediss://", bad);
    }
  });

  test("SMTP: off without SMTP_SERVER; defaults, implicit TLS on 465, overrides and bad values", () => {
    assert.equal(loadConfig({ SMTP_PORT: "25", SMTP_LOGIN: "x" }).smtp, undefined);
    assert.deepEqual(loadConfig({ SMTP_SERVER: "smtp.example", LOCAL_DOMAIN: "social.example:8443" }).smtp, {
      host: "smtp.example",
      port: 587,
      user: undefined,
      password: undefined,
      from: "notifications@social.example",
      secure: false,
      starttls: "auto",
    });
    assert.equal(loadConfig({ SMTP_SERVER: "smtp.example" }).smtp?.from, "notifications@localhost");
    assert.deepEqual(
      loadConfig({
        SMTP_SERVER: " mail.example ",
        SMTP_PORT: "465",
        SMTP_LOGIN: "postmaster",
        SMTP_PASSWORD: "pw",
        SMTP_FROM_ADDRESS: "Rookery <no-reply@social.example>",
        SMTP_ENABLE_STARTTLS: "never",
      }).smtp,
      {
        host: "mail.example",
        port: 465,
        user: "postmaster",
        password: "pw",
        from: "Rookery <no-reply@social.example>",
        secure: true,
        starttls: "never",
      },
    );
    assert.equal(loadConfig({ SMTP_SERVER: "smtp.example", SMTP_PORT: "465", SMTP_SSL: "false" }).smtp?.secure, false);
    assert.equal(loadConfig({ SMTP_SERVER: "smtp.example", SMTP_SSL: "true" }).smtp?.secure, true);
    assert.equal(loadConfig({ SMTP_SERVER: "smtp.example", SMTP_TLS: "true" }).smtp?.secure, true);
    assert.equal(loadConfig({ SMTP_SERVER: "smtp.example", SMTP_ENABLE_STARTTLS: "Always" }).smtp?.starttls, "always");
    assert.match(configError({ SMTP_SERVER: "smtp.example", SMTP_PORT: "smtp" }).message, /^SMTP_PORT /);
    assert.match(
      configError({ SMTP_SERVER: "smtp.example", SMTP_PORT: "0" }).message,
      /^SMTP_PORT must be between 1 and 65535/,
    );
    assert.match(configError({ SMTP_SERVER: "smtp.example", SMTP_SSL: "perhaps" }).message, /^SMTP_SSL /);
    assert.match(
      configError({ SMTP_SERVER: "smtp.example", SMTP_ENABLE_STARTTLS: "sometimes" }).message,
      /^SMTP_ENABLE_STARTTLS must be one of auto, always, never/,
    );
  });
});

describe("environmentWithDotenv", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "rookery-dotenv-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("reads .env under the real environment (the environment wins)", () => {
    const file = join(dir, ".env");
    writeFileSync(
      file,
      '# comment\nLOCAL_DOMAIN=fromfile.example\nPORT=4000\nSMTP_FROM_ADDRESS="Rookery <hi@fromfile.example>"\n',
    );
    const env = environmentWithDotenv({ LOCAL_DOMAIN: "real.example", BIND: "0.0.0.0" }, file);
    assert.equal(env.LOCAL_DOMAIN, "real.example");
    assert.equal(env.PORT, "4000");
    assert.equal(env.BIND, "0.0.0.0");
    assert.equal(env.SMTP_FROM_ADDRESS, "Rookery <hi@fromfile.example>");
    const config = loadConfig(env);
    assert.equal(config.localDomain, "real.example");
    assert.equal(config.port, 4000);
    assert.equal(config.bind, "0.0.0.0");
  });

  test("a variable set to the empty string in the environment still wins", () => {
    const file = join(dir, "empty.env");
    writeFileSync(file, "LOCAL_HTTPS=true\n");
    assert.equal(environmentWithDotenv({ LOCAL_HTTPS: "" }, file).LOCAL_HTTPS, "");
  });

  test("without the file the environment is used as it is", () => {
    const env = { PORT: "5000" };
    assert.deepEqual(environmentWithDotenv(env, join(dir, "missing.env")), { PORT: "5000" });
  });

  test("a bad value in .env is reported like one in the environment", () => {
    const file = join(dir, "bad.env");
    writeFileSync(file, "PORT=eighty\n");
    assert.equal(
      configError(environmentWithDotenv({}, file) as Record<string, string>).message,
      'PORT must be a whole number, got "eighty"',
    );
  });
});
