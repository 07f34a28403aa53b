/**
 * Every route, fed IDs, dates, offsets and limits no client should send (words, numbers beyond 64 bits, exponents,
 * booleans, objects, far-away years) in the path, the query, JSON and form bodies, answers a
 * clear 4xx (or a normal answer), never a 5xx — on SQLite and on PostgreSQL, whose bigint and
 * timestamp columns refuse what SQLite stores.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { Browser } from "../browser.ts";
import {
  createTestServer,
  postStatus,
  request,
  routesOf,
  standardAccounts,
  uploadImage,
  type StandardAccounts,
  type TestServer,
} from "../kit.ts";

/** IDs as strings: not decimal, beyond signed 64 bits either way, exponent and hex forms, padding. */
const BAD_IDS = ["abc", "9223372036854775808", "-9223372036854775809", "1e308", " 12 ", "１２", "1.5"];
/** IDs as JSON values of the wrong type; BIG is written as a bare number with every digit. */
const BIG = "117668027173577827123";
const BAD_JSON_IDS: unknown[] = [1e308, 1.5, true, {}, null, "__BIG__"];
/** Datetimes outside what either engine stores, or unreadable. */
const BAD_DATES = [
  "20000-01-01T00:00:00Z",
  "+020000-01-01T00:00:00.000Z",
  "-000001-01-01T00:00:00Z",
  "0000-00-00",
  "9999-12-31T23:59:60Z",
  "1e308",
  "275760-09-13T00:00:00Z",
];

/** Offsets and limits beyond 64 bits, negative, in exponent form or no number at all. */
const BAD_COUNTS = ["9223372036854775808", "-9223372036854775809", "99999999999999999999999", "1e308", "-1", "abc"];

const ID_FIELDS = ["id", "in_reply_to_id", "account_id", "max_id", "since_id", "min_id", "status_id"];
const LIST_FIELDS = ["media_ids", "id", "choices", "allowed_mentions"];

/**
 * Several bodies per bad value, so that one early refusal (a poll beside media, say) does not hide
 * the others: references alone, media alone, a poll alone, media attributes alone.
 */
function bodyShapes(value: unknown): Array<Record<string, unknown>> {
  const references: Record<string, unknown> = { status: "sweep" };
  for (const field of ID_FIELDS) references[field] = value;
  for (const field of LIST_FIELDS) references[field] = [value];
  return [
    references,
    { status: "sweep", media_ids: [value] },
    { status: "sweep", in_reply_to_id: value },
    { choices: [value] },
    { status: "sweep", poll: { options: ["a", "b"], expires_in: value } },
    { status: "sweep", media_attributes: [{ id: value, description: "d" }], media_ids: [value] },
  ];
}

function jsonBodies(value: unknown): string[] {
  return bodyShapes(value).map((body) => JSON.stringify(body).replaceAll('"__BIG__"', BIG));
}

function formBodies(value: string): string[] {
  return bodyShapes(value).map((body) => {
    const pairs: Array<[string, string]> = [];
    for (const [key, item] of Object.entries(body)) {
      if (Array.isArray(item)) {
        for (const entry of item) {
          if (typeof entry === "object" && entry !== null)
            for (const [k, v] of Object.entries(entry)) pairs.push([`${key}[][${k}]`, String(v)]);
          else pairs.push([`${key}[]`, String(entry)]);
        }
      } else if (typeof item === "object" && item !== null) {
        for (const [k, v] of Object.entries(item)) {
          if (Array.isArray(v)) for (const entry of v) pairs.push([`${key}[${k}][]`, String(entry)]);
          else pairs.push([`${key}[${k}]`, String(v)]);
        }
      } else {
        pairs.push([key, String(item)]);
      }
    }
    return new URLSearchParams(pairs).toString();
  });
}

describe("IDs and dates nobody should send never cause a 5xx", () => {
  let server: TestServer;
  let a: StandardAccounts;
  let browser: Browser;
  let csrf: string;
  const failures: string[] = [];

  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
    browser = new Browser(server.app);
    // The browser is carol's: revoking her apps must not revoke the API token the sweep uses (alice's).
    await browser.signIn(a.carol.user.email);
    await browser.get("/settings");
    csrf = decodeURIComponent(browser.cookies.get("_rookery_csrf") ?? "");
  });
  after(() => server.close());

  const check = (res: LightMyRequestResponse, what: string) => {
    // Translation without a provider is the one documented 503.
    const documented = res.statusCode === 503 && what.includes("/translate");
    if (res.statusCode >= 500 && !documented)
      failures.push(`${res.statusCode} ${what.slice(0, 160)}: ${res.body.slice(0, 200)}`);
  };

  let fixtureCount = 0;

  /** Real records of alice's to put in the path, so the handlers go past the lookup. */
  async function fixtures(): Promise<Record<string, string>> {
    const token = a.alice.token;
    const media = await uploadImage(server, a.alice);
    const status = await postStatus(server, a.alice, {
      status: "real",
      poll: { options: ["x", "y"], expires_in: 600 },
    });
    assert.ok(status.poll, "the fixture status has a poll");
    // A day apart each, to stay under the limit of 25 scheduled posts a day.
    const later = new Date(Date.now() + 3600_000 + 86_400_000 * fixtureCount++).toISOString();
    const scheduled = (
      await request(server.app, "POST", "/api/v1/statuses", { token, json: { status: "later", scheduled_at: later } })
    ).json();
    assert.ok(scheduled?.id, `fixture scheduled: ${JSON.stringify(scheduled)}`);
    return {
      statuses: status.id,
      polls: status.poll.id,
      media: media.id,
      scheduled_statuses: scheduled.id,
      authorized_applications: a.app.id,
    };
  }

  function realId(path: string, real: Record<string, string>): string {
    const family = Object.keys(real).find((key) => path.includes(`/${key}/:`));
    return family ? real[family] : a.bob.account.id;
  }

  const send = (method: string, url: string, payload: string | undefined, contentType: string | undefined) => {
    const headers: Record<string, string> = { authorization: `Bearer ${a.alice.token}` };
    if (contentType) headers["content-type"] = contentType;
    if (url.startsWith("/oauth/authorized_applications") || url.startsWith("/settings") || url.startsWith("/auth/")) {
      headers.cookie = [...browser.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    }
    return server.app.inject({ method: method as "GET", url, headers, payload });
  };

  // Thousands of requests over every route (more with each capability): its own time limit, not the suite's 2 minutes.
  test("every route, every bad ID and date, in the path, the query, JSON and forms", { timeout: 900_000 }, async () => {
    const routes = routesOf(server.app);
    assert.ok(routes.length > 50, `routes found: ${routes.length}`);
    assert.ok(routes.some(([m, p]) => m === "PUT" && p === "/api/v1/scheduled_statuses/:id"));
    for (const [method, path] of routes) {
      if (path === "/auth/sign_out") continue;
      // Event streams stay open by design; their parameters are checked in test/api/streaming.test.ts.
      if (path.startsWith("/api/v1/streaming/") && path !== "/api/v1/streaming/health") continue;
      const withBody = method !== "GET" && method !== "DELETE";
      const token = `authenticity_token=${encodeURIComponent(csrf)}`;
      // Bad IDs in the path, with a plain body: the lookup must refuse them.
      if (path.includes(":")) {
        for (const bad of BAD_IDS) {
          const url = path.replace(/:[a-z_]+/g, encodeURIComponent(bad));
          check(
            await send(
              method,
              `${url}?${token}`,
              withBody ? "status=sweep" : undefined,
              withBody ? "application/x-www-form-urlencoded" : undefined,
            ),
            `${method} ${url}`,
          );
        }
      }
      // Every bad value in every parameter, on a path that reaches the handler's work.
      const url = path.replace(/:[a-z_]+/g, path.includes(":") ? realId(path, await fixtures()) : "");
      for (const bad of BAD_IDS) {
        for (const form of formBodies(bad)) {
          if (withBody)
            check(
              await send(method, `${url}?${token}`, form, "application/x-www-form-urlencoded"),
              `${method} ${url} form ${form}`,
            );
          else check(await send(method, `${url}?${form}&${token}`, undefined, undefined), `${method} ${url}?${form}`);
        }
      }
      // Offsets and limits in the query (which wins over a body), with a query word for the searches.
      for (const count of BAD_COUNTS) {
        const query = `q=sweep&offset=${encodeURIComponent(count)}&limit=${encodeURIComponent(count)}&${token}`;
        check(
          await send(
            method,
            `${url}?${query}`,
            withBody ? "status=sweep" : undefined,
            withBody ? "application/x-www-form-urlencoded" : undefined,
          ),
          `${method} ${url}?${query}`,
        );
      }
      if (!withBody) continue;
      for (const value of [...BAD_JSON_IDS, ...BAD_IDS]) {
        for (const json of jsonBodies(value))
          check(await send(method, `${url}?${token}`, json, "application/json"), `${method} ${url} json ${json}`);
      }
      for (const date of BAD_DATES) {
        const body = JSON.stringify({ status: "sweep", scheduled_at: date, expires_at: date });
        check(await send(method, url, body, "application/json"), `${method} ${url} date ${date}`);
      }
    }
    assert.deepEqual(failures, []);
  });
});
