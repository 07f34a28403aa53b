/**
 * Seeds a Rookery database with a benchmark data set through the real services: users
 * (createLocalUser, updateProfile), an application and tokens (insertApplication,
 * issueAccessToken), statuses with mentions, hashtags, links, content warnings, replies and long
 * threads (createStatus), boosts (reblog). Favourites, bookmarks and follows, which have no bulk
 * service, are inserted in batches with Kysely, and their counters are recomputed the way the
 * services keep them. Writes a manifest (tokens, status IDs, threads) that bench/run.ts reads.
 *
 * Run `node bench/seed.ts --help` for the options.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { sql } from "kysely";
import { boot } from "../src/boot.ts";
import { loadConfig } from "../src/config.ts";
import type { Ctx } from "../src/context.ts";
import { newId } from "../src/db/ids.ts";
import type { AccountRow, StatusRow, UserRow } from "../src/db/schema.ts";
import { createLocalUser } from "../src/services/accounts/create.ts";
import { updateProfile } from "../src/services/accounts/profile.ts";
import { insertApplication, OOB_REDIRECT_URI } from "../src/services/auth/applications.ts";
import { issueAccessToken } from "../src/services/auth/tokens.ts";
import { createStatus } from "../src/services/statuses/create.ts";
import { prepareStatus } from "../src/services/statuses/prepare.ts";
import { reblog } from "../src/services/statuses/interactions.ts";
import type { Visibility } from "../src/services/statuses/validate.ts";
import {
  BenchError,
  benchEnvironment,
  cumulativeWeights,
  DEFAULT_DATA_DIR,
  DEFAULT_POSTGRES_URL,
  DEFAULT_STATUSES,
  DEFAULT_USERS,
  defaultDatabaseUrl,
  engineDir,
  gitCommit,
  MANIFEST_FORMAT,
  manifestPath,
  Progress,
  Random,
  runPool,
  sentence,
  TAGS,
  TOKEN_USERS,
  WORDS,
  type Engine,
  type Manifest,
  type ManifestThread,
  type ManifestToken,
  recreatePostgresDatabase,
} from "./common.ts";

const HELP = `Usage: node bench/seed.ts [options]

Creates a fresh benchmark database (the old one is dropped) and fills it through Rookery's own
services: users with profiles, an application and tokens, statuses with mentions, hashtags,
links, content warnings, replies and long threads, boosts; then favourites, bookmarks and
follows in bulk, with their counters. Writes DATA_DIR/ENGINE/manifest.json (tokens and status
IDs for bench/run.ts). Progress goes to stderr.

Options:
  --engine sqlite|postgres  Database engine (default: sqlite)
  --data-dir DIR            Where data sets and manifests live (default: ${DEFAULT_DATA_DIR})
  --postgres-url URL        PostgreSQL database for --engine postgres; it is dropped and recreated,
                            so its name must start with rookery_bench
                            (default: $BENCH_POSTGRES_URL or ${DEFAULT_POSTGRES_URL})
  --users N                 Local users (default: ${DEFAULT_USERS})
  --statuses N              Rows in the statuses table, boosts included (default: ${DEFAULT_STATUSES})
  --random-seed N           Seed of the random choices; the same seed gives the same data (default: 42)
  --concurrency N           Statuses created at once (default: 4)
  --quiet                   No progress display
  -h, --help                Show this help

Examples:
  node bench/seed.ts                                   # SQLite, 200 users, 20,000 statuses
  node bench/seed.ts --engine postgres --statuses 5000
`;

export interface SeedOptions {
  engine: Engine;
  dataDir: string;
  databaseUrl: string;
  users: number;
  statuses: number;
  randomSeed: number;
  concurrency: number;
  quiet: boolean;
}

// ---------------------------------------------------------------------------------------------
// Vocabulary

const FIRST_NAMES = [
  "alice",
  "bob",
  "carol",
  "dave",
  "erin",
  "frank",
  "grace",
  "heidi",
  "ivan",
  "judy",
  "mallory",
  "niaj",
  "olivia",
  "peggy",
  "rupert",
  "sybil",
  "trent",
  "victor",
  "walter",
  "yasmin",
  "zoe",
  "amara",
  "bruno",
  "chen",
  "dmitri",
  "elena",
  "farid",
  "greta",
  "hiro",
  "ines",
  "jonas",
  "kemal",
  "lena",
  "mateo",
  "noor",
  "oskar",
  "priya",
  "quentin",
  "rosa",
  "sami",
  "tariq",
  "uma",
  "vera",
  "wren",
  "ximena",
  "yusuf",
  "zara",
  "anouk",
  "bea",
  "cyril",
];
const SURNAMES = [
  "Nguyen",
  "Okafor",
  "Schmidt",
  "Rossi",
  "Kowalski",
  "Tanaka",
  "Silva",
  "Dubois",
  "Haddad",
  "Larsen",
  "Moreau",
  "Ivanova",
  "Costa",
  "Novak",
  "Singh",
];
const CONTENT_WARNINGS = ["spoilers", "food", "politics", "long post", "eye contact", "mental health", "news"];
const LINK_HOSTS = ["example.org", "blog.example.net", "news.example.com", "docs.example.org"];

function paragraph(rng: Random, sentences: number): string {
  return Array.from({ length: sentences }, () => sentence(rng)).join(" ");
}

// ---------------------------------------------------------------------------------------------
// The plan of statuses, decided before anything is written (deterministic for a seed value)

interface StatusSpec {
  author: number;
  text: string;
  visibility: Visibility;
  spoilerText: string;
  language: string | undefined;
  /** Index of the replied-to status in the plan. */
  parent: number | undefined;
  viaApp: boolean;
  thread: number | undefined;
}

interface ThreadPlan {
  members: number[];
  depth: number[];
  parentOf: number[];
}

interface Plan {
  specs: StatusSpec[];
  threads: ThreadPlan[];
  boosts: number;
}

function pickVisibility(rng: Random, table: ReadonlyArray<[Visibility, number]>): Visibility {
  let roll = rng.next();
  for (const [visibility, p] of table) {
    if (roll < p) return visibility;
    roll -= p;
  }
  return table[0][0];
}

const GENERAL_VISIBILITY: ReadonlyArray<[Visibility, number]> = [
  ["public", 0.7],
  ["unlisted", 0.12],
  ["private", 0.12],
  ["direct", 0.06],
];
const REPLY_VISIBILITY: ReadonlyArray<[Visibility, number]> = [
  ["public", 0.75],
  ["unlisted", 0.2],
  ["private", 0.05],
];
const THREAD_VISIBILITY: ReadonlyArray<[Visibility, number]> = [
  ["public", 0.8],
  ["unlisted", 0.2],
];

function planStatuses(rng: Random, usernames: readonly string[], total: number): Plan {
  const users = usernames.length;
  // Who posts: a few accounts post a lot, most post a little (Zipf over a shuffled order).
  const rank = rng.shuffle(Array.from({ length: users }, (_, i) => i));
  const authorWeights = cumulativeWeights(rank.map((r) => 1 / Math.pow(r + 1, 0.9) + 0.01));
  const mentionWeights = cumulativeWeights(rank.map((r) => 1 / Math.pow(r + 1, 0.6)));
  const tagWeights = cumulativeWeights(TAGS.map((_, i) => 1 / (i + 1)));
  const pickAuthor = () => rng.weighted(authorWeights);
  const pickMentioned = (except: number) => {
    for (;;) {
      const u = rng.weighted(mentionWeights);
      if (u !== except || users === 1) return u;
    }
  };

  const boosts = users > 1 ? Math.round(total * 0.02) : 0;
  const originals = total - boosts;
  // Long threads for the context endpoint: about one per thousand statuses, 20–60 posts each.
  const threadCount = originals >= 200 ? Math.max(1, Math.round(originals / 1000)) : 0;
  const threadSizes = Array.from({ length: threadCount }, () => rng.int(20, 60));
  const general = originals - threadSizes.reduce((a, b) => a + b, 0);
  const slots: Array<{ key: number; thread?: number; member?: number }> = Array.from({ length: general }, (_, i) => ({
    key: i,
  }));
  threadSizes.forEach((size, thread) => {
    let key = rng.next() * general * 0.7;
    for (let member = 0; member < size; member++) {
      slots.push({ key, thread, member });
      key += (rng.next() * general * 0.5) / size;
    }
  });
  slots.sort((a, b) => a.key - b.key);

  const specs: StatusSpec[] = [];
  const threads: ThreadPlan[] = threadSizes.map(() => ({ members: [], depth: [], parentOf: [] }));
  const participants = threadSizes.map(() =>
    rng.sample(
      Array.from({ length: users }, (_, i) => i),
      rng.int(3, Math.min(6, users)),
    ),
  );
  const replyPool: number[] = [];
  const remember = (index: number) => {
    replyPool.push(index);
    if (replyPool.length > 400) replyPool.shift();
  };

  const body = (author: number, opening: string[]): string => {
    const paragraphs = Array.from({ length: rng.chance(0.1) ? 2 : 1 }, () => paragraph(rng, rng.int(1, 3)));
    const parts = [...opening, paragraphs.join("\n\n").slice(0, 320)];
    if (rng.chance(0.2) && users > 1) parts.push(`cc @${usernames[pickMentioned(author)]}`);
    if (rng.chance(0.08)) parts.push(`https://${rng.pick(LINK_HOSTS)}/${rng.pick(WORDS)}/${rng.int(1, 99999)}`);
    if (rng.chance(0.35)) {
      const count = rng.int(1, 3);
      parts.push(
        [...new Set(Array.from({ length: count }, () => TAGS[rng.weighted(tagWeights)]))].map((t) => `#${t}`).join(" "),
      );
    }
    return parts.join(" ");
  };
  const language = () => {
    const roll = rng.next();
    return roll < 0.8 ? "en" : roll < 0.9 ? "de" : roll < 0.95 ? "fr" : undefined;
  };
  const warning = () => (rng.chance(0.05) ? rng.pick(CONTENT_WARNINGS) : "");

  for (const slot of slots) {
    const index = specs.length;
    if (slot.thread !== undefined) {
      const thread = threads[slot.thread];
      const people = participants[slot.thread];
      if (slot.member === 0) {
        specs.push({
          author: people[0],
          text: body(people[0], []),
          visibility: "public",
          spoilerText: "",
          language: "en",
          parent: undefined,
          viaApp: true,
          thread: slot.thread,
        });
        thread.parentOf.push(-1);
        thread.depth.push(0);
      } else {
        // Mostly an answer to the latest post, sometimes to an earlier one: a tree, not a chain.
        const local = rng.chance(0.55) ? thread.members.length - 1 : rng.int(0, thread.members.length - 1);
        const parent = thread.members[local];
        const parentAuthor = specs[parent].author;
        const author = people.length > 1 ? rng.pick(people.filter((p) => p !== parentAuthor)) : parentAuthor;
        const opening = author === parentAuthor ? [] : [`@${usernames[parentAuthor]}`];
        specs.push({
          author,
          text: body(author, opening),
          visibility: pickVisibility(rng, THREAD_VISIBILITY),
          spoilerText: "",
          language: "en",
          parent,
          viaApp: rng.chance(0.7),
          thread: slot.thread,
        });
        thread.parentOf.push(local);
        thread.depth.push(thread.depth[local] + 1);
      }
      thread.members.push(index);
      continue;
    }
    const author = pickAuthor();
    if (replyPool.length > 0 && rng.chance(0.2)) {
      const parent = rng.pick(replyPool);
      const parentAuthor = specs[parent].author;
      const opening = parentAuthor === author ? [] : [`@${usernames[parentAuthor]}`];
      const visibility = pickVisibility(rng, REPLY_VISIBILITY);
      specs.push({
        author,
        text: body(author, opening),
        visibility,
        spoilerText: warning(),
        language: language(),
        parent,
        viaApp: rng.chance(0.7),
        thread: undefined,
      });
      if (visibility === "public" || visibility === "unlisted") remember(index);
      continue;
    }
    const visibility = pickVisibility(rng, GENERAL_VISIBILITY);
    const opening = visibility === "direct" && users > 1 ? [`@${usernames[pickMentioned(author)]}`] : [];
    specs.push({
      author,
      text: body(author, opening),
      visibility,
      spoilerText: warning(),
      language: language(),
      parent: undefined,
      viaApp: rng.chance(0.7),
      thread: undefined,
    });
    if (visibility === "public" || visibility === "unlisted") remember(index);
  }
  return { specs, threads, boosts };
}

/** The thread member with the most context on both sides (ancestors and descendants). */
function focusOf(thread: ThreadPlan): { member: number; ancestors: number; descendants: number } {
  const subtree = thread.members.map(() => 0);
  for (let i = thread.members.length - 1; i > 0; i--) subtree[thread.parentOf[i]] += subtree[i] + 1;
  let best = { member: 0, ancestors: 0, descendants: subtree[0], score: -1 };
  thread.members.forEach((_, i) => {
    const score = Math.min(thread.depth[i], subtree[i]);
    if (score > best.score) best = { member: i, ancestors: thread.depth[i], descendants: subtree[i], score };
  });
  return best;
}

// ---------------------------------------------------------------------------------------------
// Database set-up

function sqlitePath(url: string): string {
  return resolve(url.slice("sqlite:".length));
}

/** Drops and recreates the benchmark database (a SQLite file, or a PostgreSQL database named rookery_bench…). */
async function recreateDatabase(options: SeedOptions): Promise<void> {
  if (options.databaseUrl.startsWith("sqlite:")) {
    const file = sqlitePath(options.databaseUrl);
    const inside = !relative(resolve(options.dataDir), file).startsWith("..");
    if (!inside)
      throw new BenchError(
        `refusing to delete ${file}: benchmark SQLite files live under --data-dir (${options.dataDir})`,
      );
    for (const suffix of ["", "-wal", "-shm"]) rmSync(file + suffix, { force: true });
    mkdirSync(dirname(file), { recursive: true });
    return;
  }
  await recreatePostgresDatabase(options.databaseUrl);
}

async function insertInChunks<T extends object>(
  label: string,
  rows: T[],
  insert: (chunk: T[]) => Promise<unknown>,
  quiet: boolean,
): Promise<void> {
  const progress = new Progress(label, rows.length, quiet);
  for (let i = 0; i < rows.length; i += 500) {
    const chunk = rows.slice(i, i + 500);
    await insert(chunk);
    progress.tick(chunk.length);
  }
  progress.finish();
}

// ---------------------------------------------------------------------------------------------
// Seeding

interface LocalUser {
  account: AccountRow;
  user: UserRow;
}

export async function seed(options: SeedOptions): Promise<Manifest> {
  const started = performance.now();
  const rng = new Random(options.randomSeed);
  const log = (message: string) => {
    if (!options.quiet) process.stderr.write(`${message}\n`);
  };
  mkdirSync(engineDir(options.dataDir, options.engine), { recursive: true });
  log(
    `seeding ${options.engine} (${options.databaseUrl.replace(/\/\/[^@/]*@/, "//***@")}): ${options.users} users, ${options.statuses} statuses`,
  );
  await recreateDatabase(options);
  const config = loadConfig({
    ...benchEnvironment(options.databaseUrl, options.dataDir, options.engine),
    LOG_LEVEL: "warn",
  });
  const ctx: Ctx = await boot(config);
  try {
    return await fill(ctx, options, rng, started);
  } finally {
    await ctx.db.close();
  }
}

async function fill(ctx: Ctx, options: SeedOptions, rng: Random, started: number): Promise<Manifest> {
  const db = ctx.db.kysely;
  const nowIso = () => new Date().toISOString();

  // Users, through the same service as `rookery accounts create`.
  const usernames = Array.from({ length: options.users }, (_, i) =>
    i < FIRST_NAMES.length
      ? FIRST_NAMES[i]
      : `${FIRST_NAMES[i % FIRST_NAMES.length]}${Math.floor(i / FIRST_NAMES.length) + 1}`,
  );
  const users: LocalUser[] = [];
  let progress = new Progress("users", options.users, options.quiet);
  await runPool(usernames, 2, async (username, i) => {
    users[i] = await createLocalUser(ctx, {
      username,
      email: `${username}@bench.example`,
      password: `bench-password-${i}`,
      confirmed: true,
      approved: true,
    });
    progress.tick();
  });
  progress.finish();

  progress = new Progress("profiles", options.users, options.quiet);
  for (const [i, local] of users.entries()) {
    if (rng.chance(0.75)) {
      const display = `${usernames[i][0].toUpperCase()}${usernames[i].slice(1)} ${rng.pick(SURNAMES)}`.slice(0, 30);
      const note = `${sentence(rng)} ${rng.chance(0.5) ? `#${rng.pick(TAGS)}` : ""}`.trim();
      const updated = await updateProfile(ctx, local.account, local.user, { displayName: display, note });
      users[i] = updated;
    }
    progress.tick();
  }
  progress.finish();

  // The client application and the tokens the benchmark uses.
  const app = await insertApplication(db, {
    name: "Rookery bench",
    website: "https://bench.example/",
    redirectUris: [OOB_REDIRECT_URI],
    scopes: ["read", "write", "follow", "push"],
  });
  const tokenUsers = users.slice(0, Math.min(TOKEN_USERS, users.length));
  const tokens: ManifestToken[] = [];
  for (const local of tokenUsers) {
    const issued = await issueAccessToken(db, {
      applicationId: app.id,
      userId: local.user.id,
      scopes: "read write follow push",
    });
    tokens.push({
      username: local.account.username,
      accountId: local.account.id,
      token: issued.accessToken,
      bookmarks: 0,
    });
  }

  // Follows: popular accounts are followed more.
  const popularity = cumulativeWeights(users.map((_, i) => 1 / Math.pow(i + 1, 0.5)));
  const follows: Array<{
    id: string;
    account_id: string;
    target_account_id: string;
    created_at: string;
    updated_at: string;
  }> = [];
  for (const [i, local] of users.entries()) {
    const wanted = Math.min(users.length - 1, Math.round(Math.exp(rng.next() * 4) + 2));
    const targets = new Set<number>();
    for (let guard = 0; targets.size < wanted && guard < wanted * 20; guard++) {
      const t = rng.weighted(popularity);
      if (t !== i) targets.add(t);
    }
    for (const t of targets) {
      const at = nowIso();
      follows.push({
        id: newId(),
        account_id: local.account.id,
        target_account_id: users[t].account.id,
        created_at: at,
        updated_at: at,
      });
    }
  }
  await insertInChunks("follows", follows, (chunk) => db.insertInto("follows").values(chunk).execute(), options.quiet);
  await sql`UPDATE accounts SET
      following_count = (SELECT count(*) FROM follows WHERE follows.account_id = accounts.id),
      followers_count = (SELECT count(*) FROM follows WHERE follows.target_account_id = accounts.id)
    WHERE domain IS NULL`.execute(db);

  // Statuses, through createStatus (text rendering, mentions, tags, counters, reply rules).
  const plan = planStatuses(rng, usernames, options.statuses);
  const created: StatusRow[] = [];
  const ready = plan.specs.map(() => {
    let settle!: { resolve: (row: StatusRow) => void; reject: (error: unknown) => void };
    const promise = new Promise<StatusRow>((resolve, reject) => (settle = { resolve, reject }));
    promise.catch(() => {});
    return { promise, ...settle };
  });
  progress = new Progress("statuses", plan.specs.length, options.quiet);
  await runPool(plan.specs, options.concurrency, async (spec, i) => {
    try {
      const parent = spec.parent === undefined ? undefined : await ready[spec.parent].promise;
      const author = users[spec.author];
      const poster = { account: author.account, user: author.user, applicationId: spec.viaApp ? app.id : null };
      const draft = await prepareStatus(ctx, poster, {
        text: spec.text,
        mediaIds: [],
        spoilerText: spec.spoilerText,
        sensitive: spec.spoilerText !== "" ? true : undefined,
        visibility: spec.visibility,
        language: spec.language,
        inReplyToId: parent?.id,
      });
      const row = await createStatus(ctx, poster, draft);
      created[i] = row;
      ready[i].resolve(row);
      progress.tick();
    } catch (error) {
      ready[i].reject(error);
      throw error;
    }
  });
  progress.finish();

  const readable = created.filter((s) => s.visibility === "public" || s.visibility === "unlisted");

  // Boosts, through the reblog service.
  const boostPairs = new Set<string>();
  const boostJobs: Array<{ booster: number; status: StatusRow }> = [];
  for (let guard = 0; boostJobs.length < plan.boosts && guard < plan.boosts * 20 && readable.length > 0; guard++) {
    const booster = rng.weighted(popularity);
    const status = rng.pick(readable);
    const key = `${booster}:${status.id}`;
    if (status.account_id === users[booster].account.id || boostPairs.has(key)) continue;
    boostPairs.add(key);
    boostJobs.push({ booster, status });
  }
  const boosts: StatusRow[] = [];
  progress = new Progress("boosts", boostJobs.length, options.quiet);
  await runPool(boostJobs, options.concurrency, async ({ booster, status }) => {
    boosts.push(await reblog(ctx, users[booster].account, status, undefined));
    progress.tick();
  });
  progress.finish();

  // Favourites: most posts get none or a few, some get many.
  const favourites: Array<{ id: string; account_id: string; status_id: string; created_at: string }> = [];
  for (const status of readable) {
    const roll = rng.next();
    const count =
      roll < 0.45
        ? 0
        : roll < 0.995
          ? Math.min(users.length - 1, Math.floor(-Math.log(1 - rng.next()) * 3) + 1)
          : rng.int(20, Math.max(20, Math.min(80, users.length - 1)));
    const fans = new Set<number>();
    for (let guard = 0; fans.size < count && guard < count * 20; guard++) {
      const fan = rng.int(0, users.length - 1);
      if (users[fan].account.id !== status.account_id) fans.add(fan);
    }
    for (const fan of fans)
      favourites.push({ id: newId(), account_id: users[fan].account.id, status_id: status.id, created_at: nowIso() });
  }
  await insertInChunks(
    "favourites",
    favourites,
    (chunk) => db.insertInto("favourites").values(chunk).execute(),
    options.quiet,
  );
  await sql`UPDATE statuses SET favourites_count = (SELECT count(*) FROM favourites WHERE favourites.status_id = statuses.id)
    WHERE id IN (SELECT status_id FROM favourites)`.execute(db);

  // Bookmarks: everyone keeps a few; the token users enough for a full page of 40.
  const bookmarks: Array<{ id: string; account_id: string; status_id: string; created_at: string }> = [];
  const bookmarkCounts = new Map<string, number>();
  for (const [i, local] of users.entries()) {
    const wanted = i < tokenUsers.length ? rng.int(60, 120) : rng.int(3, 40);
    const chosen = new Set<string>();
    for (let guard = 0; chosen.size < wanted && guard < wanted * 20 && readable.length > 0; guard++) {
      const status = rng.pick(readable);
      if (status.account_id !== local.account.id) chosen.add(status.id);
    }
    for (const statusId of chosen)
      bookmarks.push({ id: newId(), account_id: local.account.id, status_id: statusId, created_at: nowIso() });
    bookmarkCounts.set(local.account.id, chosen.size);
  }
  await insertInChunks(
    "bookmarks",
    bookmarks,
    (chunk) => db.insertInto("bookmarks").values(chunk).execute(),
    options.quiet,
  );
  for (const token of tokens) token.bookmarks = bookmarkCounts.get(token.accountId) ?? 0;

  // Posts with links enqueued link-preview jobs; the benchmark server must not spend its time
  // fetching them from the network, so they are dropped (as if the previews had failed).
  const droppedJobs = await db.deleteFrom("jobs").where("name", "=", "cards.fetch").executeTakeFirst();
  if (ctx.db.engine === "postgres") await sql`ANALYZE`.execute(db); // what autovacuum would soon do after a bulk load

  const threads: ManifestThread[] = plan.threads.map((thread) => {
    const focus = focusOf(thread);
    return {
      rootId: created[thread.members[0]].id,
      focusId: created[thread.members[focus.member]].id,
      size: thread.members.length,
      focusAncestors: focus.ancestors,
      focusDescendants: focus.descendants,
    };
  });
  const counts: Record<string, number> = {};
  for (const table of [
    "accounts",
    "users",
    "oauth_access_tokens",
    "statuses",
    "mentions",
    "tags",
    "statuses_tags",
    "favourites",
    "bookmarks",
    "follows",
    "jobs",
  ] as const) {
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll().as("n"))
      .executeTakeFirstOrThrow();
    counts[table] = Number(row.n);
  }
  counts.replies = created.filter((s) => s.in_reply_to_id).length;
  counts.boosts = boosts.length;
  counts.link_preview_jobs_dropped = Number(droppedJobs.numDeletedRows);
  const visibilityCounts = new Map<string, number>();
  for (const s of created) visibilityCounts.set(s.visibility, (visibilityCounts.get(s.visibility) ?? 0) + 1);
  for (const [v, n] of visibilityCounts) counts[`statuses_${v}`] = n;

  const publicIds = [...readable, ...boosts].map((s) => s.id);
  return {
    format: MANIFEST_FORMAT,
    engine: options.engine,
    databaseUrl: options.databaseUrl,
    localDomain: ctx.config.localDomain,
    users: options.users,
    statuses: options.statuses,
    randomSeed: options.randomSeed,
    seededAt: new Date().toISOString(),
    seedSeconds: Math.round((performance.now() - started) / 1000),
    commit: gitCommit(),
    counts,
    tokens,
    publicStatusIds: rng.sample(publicIds, 5000),
    threads,
  };
}

// ---------------------------------------------------------------------------------------------
// Command line

function positiveInteger(name: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min)
    throw new Error(`--${name} must be a whole number of at least ${min}, got "${raw}"`);
  return Number(raw);
}

export function parseSeedArgs(argv: string[]): SeedOptions | "help" {
  const { values } = parseArgs({
    args: argv,
    options: {
      engine: { type: "string", default: "sqlite" },
      "data-dir": { type: "string", default: DEFAULT_DATA_DIR },
      "postgres-url": { type: "string", default: process.env.BENCH_POSTGRES_URL || DEFAULT_POSTGRES_URL },
      users: { type: "string" },
      statuses: { type: "string" },
      "random-seed": { type: "string" },
      concurrency: { type: "string" },
      quiet: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  if (values.help) return "help";
  if (values.engine !== "sqlite" && values.engine !== "postgres")
    throw new Error(`--engine must be sqlite or postgres, got "${values.engine}"`);
  const engine: Engine = values.engine;
  const dataDir = resolve(values["data-dir"]);
  const users = positiveInteger("users", values.users, DEFAULT_USERS, 2);
  const statuses = positiveInteger("statuses", values.statuses, DEFAULT_STATUSES);
  return {
    engine,
    dataDir,
    databaseUrl: defaultDatabaseUrl(dataDir, engine, values["postgres-url"]),
    users,
    statuses,
    randomSeed: positiveInteger("random-seed", values["random-seed"], 42, 0),
    concurrency: positiveInteger("concurrency", values.concurrency, 4),
    quiet: values.quiet,
  };
}

async function main(): Promise<void> {
  let options: SeedOptions | "help";
  try {
    options = parseSeedArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`seed: ${(error as Error).message}\nRun with --help for the options.\n`);
    process.exit(2);
  }
  if (options === "help") {
    process.stdout.write(HELP);
    return;
  }
  const manifest = await seed(options);
  const file = manifestPath(options.dataDir, options.engine);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(manifest, null, 2)}\n`);
  if (!options.quiet) {
    const c = manifest.counts;
    process.stderr.write(
      `seeded in ${manifest.seedSeconds}s: ${c.accounts} accounts, ${c.statuses} statuses (${c.replies} replies, ${c.boosts} boosts, ${manifest.threads.length} threads), ` +
        `${c.mentions} mentions, ${c.statuses_tags} tag uses, ${c.favourites} favourites, ${c.bookmarks} bookmarks, ${c.follows} follows\nmanifest: ${file}\n`,
    );
  }
}

if (import.meta.main) {
  try {
    await main();
  } catch (error) {
    const detail =
      error instanceof BenchError
        ? error.message
        : error instanceof Error
          ? (error.stack ?? error.message)
          : String(error);
    process.stderr.write(`\nseed failed: ${detail}\n`);
    process.exitCode = 1;
  }
}
