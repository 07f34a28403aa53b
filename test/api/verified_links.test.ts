/**
 * Verified profile links: a field whose value is an https URL gets `verified_at` once the page there
 * links back to the profile with rel="me" (checked by the `account.updated:verify_links` job after
 * PATCH /api/v1/accounts/update_credentials). The pages are served over HTTPS on loopback under
 * their own host names (a throwaway CA, OUTBOUND_HOSTS, ALLOWED_PRIVATE_ADDRESSES).
 */
import assert from "node:assert/strict";
import https from "node:https";
import net, { type AddressInfo } from "node:net";
import tls from "node:tls";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { createTestServer, createUser, get, request, type TestServer, type TestUser } from "../kit.ts";
import type { Account, CredentialAccount } from "../types.ts";
import { makePki, removePki, type Pki } from "../federation/pki.ts";

const UPDATE = "/api/v1/accounts/update_credentials";
const VERIFY = "/api/v1/accounts/verify_credentials";
const JOB = "account.updated:verify_links";
/** Mastodon's form of `verified_at`: milliseconds and a +00:00 offset. */
const VERIFIED_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00$/;

interface Page {
  status?: number;
  body?: string;
  headers?: Record<string, string>;
  /** Never answers (the connection stays open until the site closes). */
  silent?: boolean;
  /** Sends `body` and then this many bytes of padding. */
  padding?: number;
}

/** Web sites on 127.0.0.1 over HTTPS: each test sets its pages by path and reads how often each was asked for. */
class Sites {
  readonly pages = new Map<string, Page>();
  readonly hits = new Map<string, number>();
  port = 0;
  readonly #server: https.Server;

  constructor(pki: Pki) {
    this.#server = https.createServer({ key: pki.key, cert: pki.cert }, (req, res) => {
      const path = new URL(req.url ?? "/", "https://site.invalid").pathname;
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      const page = this.pages.get(path) ?? { status: 404, body: "<html><title>Not found</title></html>" };
      if (page.silent) return;
      res.writeHead(page.status ?? 200, { "content-type": "text/html; charset=utf-8", ...page.headers });
      if (req.method === "HEAD") return void res.end();
      res.write(page.body ?? "");
      const chunk = Buffer.alloc(64 * 1024, " ");
      for (let sent = 0; sent < (page.padding ?? 0); sent += chunk.length) res.write(chunk);
      res.end();
    });
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.port = (this.#server.address() as AddressInfo).port;
  }

  /** `https://links.test:<port><path>`, whose page is `page`. */
  serve(path: string, page: Page): string {
    this.pages.set(path, page);
    return this.url(path);
  }

  url(path: string, host = "links.test"): string {
    return `https://${host}:${this.port}${path}`;
  }

  hitsOf(path: string): number {
    return this.hits.get(path) ?? 0;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }
}

/** A loopback port where nothing listens. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const page = (head: string, body: string) =>
  `<!DOCTYPE html><html><head><title>Home</title>${head}</head><body>${body}</body></html>`;

describe("verified profile links", () => {
  let pki: Pki;
  let sites: Sites;
  let server: TestServer;

  before(async () => {
    pki = makePki(["links.test", "other.test"]);
    tls.setDefaultCACertificates([...tls.getCACertificates("default"), pki.caPem]);
    sites = new Sites(pki);
    await sites.start();
    server = await createTestServer({
      env: {
        ALLOWED_PRIVATE_ADDRESSES: "127.0.0.1/32",
        // rookery.test: a rel=me link to another profile here is asked whether it redirects (nothing listens).
        OUTBOUND_HOSTS: "links.test=127.0.0.1,other.test=127.0.0.1,rookery.test=127.0.0.1,private.test=10.1.2.3",
      },
    });
  });

  after(async () => {
    await server?.close();
    await sites?.close();
    if (pki) removePki(pki);
  });

  let counter = 0;
  const freshUser = () => createUser(server.ctx, `linker${++counter}`);
  const profileOf = (user: TestUser) => `https://rookery.test/@${user.username}`;

  const setFields = (user: TestUser, fields: Array<{ name: string; value: string }>) =>
    request(server.app, "PATCH", UPDATE, {
      token: user.token,
      form: fields.flatMap((f, i): Array<[string, string]> => [
        [`fields_attributes[${i}][name]`, f.name],
        [`fields_attributes[${i}][value]`, f.value],
      ]),
    });

  /** Runs the queued jobs, then checks that no link check is left waiting or failed. */
  async function runJobs(): Promise<void> {
    await server.ctx.jobs.drain();
    const left = await server.ctx.db.kysely
      .selectFrom("jobs")
      .select(["name", "failed_at", "last_error"])
      .where("name", "=", JOB)
      .execute();
    assert.deepEqual(left, []);
  }

  /** `verified_at` of each field in verify_credentials (fields and source.fields) and in GET /api/v1/accounts/:id. */
  async function verifiedAts(user: TestUser): Promise<Array<string | null>> {
    const own = await get(server.app, VERIFY, user.token);
    assert.equal(own.statusCode, 200, own.body);
    const shown = await get(server.app, `/api/v1/accounts/${user.account.id}`);
    assert.equal(shown.statusCode, 200, shown.body);
    const credential = own.json<CredentialAccount>();
    const account = shown.json<Account>();
    const times = credential.fields.map((f) => f.verified_at);
    assert.deepEqual(
      credential.source.fields.map((f) => f.verified_at),
      times,
    );
    assert.deepEqual(
      account.fields.map((f) => f.verified_at),
      times,
    );
    return times;
  }

  /** PATCHes the fields and checks that the update was accepted. */
  async function update(user: TestUser, fields: Array<{ name: string; value: string }>) {
    const res: LightMyRequestResponse = await setFields(user, fields);
    assert.equal(res.statusCode, 200, res.body);
    return res;
  }

  test("a page that links back with <a rel=me> verifies its field, in every view of the account", async () => {
    const user = await freshUser();
    const url = sites.serve(`/a/${user.username}`, {
      body: page("", `<p>Find me on <a rel="me" href="${profileOf(user)}">Mastodon</a></p>`),
    });
    const res = await update(user, [
      { name: "Web", value: url },
      { name: "Pronouns", value: "they/them" },
    ]);
    // The page is checked after the update, not during it.
    assert.deepEqual(
      res.json<CredentialAccount>().fields.map((f) => f.verified_at),
      [null, null],
    );
    assert.equal(sites.hitsOf(`/a/${user.username}`), 0);

    await runJobs();
    const [web, pronouns] = await verifiedAts(user);
    assert.match(web ?? "", VERIFIED_AT);
    assert.equal(pronouns, null);
    assert.equal(sites.hitsOf(`/a/${user.username}`), 1);
    const shown = (await get(server.app, `/api/v1/accounts/${user.account.id}`)).json<Account>();
    assert.match(shown.fields[0].value, /^<a href="[^"]+" target="_blank" rel="nofollow noopener me" translate="no">/);
  });

  test("<link rel=me> in the head and rel lists holding me verify", async () => {
    const user = await freshUser();
    const head = sites.serve(`/head/${user.username}`, {
      body: page(`<link rel="me" href="${profileOf(user)}">`, "<p>Hello</p>"),
    });
    const list = sites.serve(`/list/${user.username}`, {
      body: page("", `<a href="${profileOf(user)}" rel="noopener  ME nofollow">me</a>`),
    });
    await update(user, [
      { name: "Head", value: head },
      { name: "List", value: list },
    ]);
    await runJobs();
    const times = await verifiedAts(user);
    assert.match(times[0] ?? "", VERIFIED_AT);
    assert.match(times[1] ?? "", VERIFIED_AT);
  });

  test("the href matches the profile URL whatever its case", async () => {
    const user = await freshUser();
    const url = sites.serve(`/case/${user.username}`, {
      body: page("", `<a rel="me" href="${profileOf(user).toUpperCase()}">shouting</a>`),
    });
    await update(user, [{ name: "Web", value: url }]);
    await runJobs();
    assert.match((await verifiedAts(user))[0] ?? "", VERIFIED_AT);
  });

  test("a rel=me link that redirects to the profile verifies", async () => {
    const user = await freshUser();
    sites.pages.set(`/go/${user.username}`, { status: 301, headers: { location: profileOf(user) } });
    const url = sites.serve(`/short/${user.username}`, {
      body: page("", `<a rel="me" href="${sites.url(`/go/${user.username}`, "other.test")}">me</a>`),
    });
    await update(user, [{ name: "Web", value: url }]);
    await runJobs();
    assert.match((await verifiedAts(user))[0] ?? "", VERIFIED_AT);
    assert.equal(sites.hitsOf(`/go/${user.username}`), 1);
  });

  test("pages without a rel=me link back do not verify", async () => {
    const user = await freshUser();
    const other = await freshUser();
    const noRel = sites.serve(`/norel/${user.username}`, {
      body: page("", `<a href="${profileOf(user)}">my profile</a> <a rel="met" href="${profileOf(user)}">x</a>`),
    });
    const otherProfile = sites.serve(`/other/${user.username}`, {
      body: page("", `<a rel="me" href="${profileOf(other)}">someone else</a>`),
    });
    const notFound = sites.serve(`/gone/${user.username}`, {
      status: 404,
      body: page("", `<a rel="me" href="${profileOf(user)}">me</a>`),
    });
    const inScript = sites.serve(`/script/${user.username}`, {
      body: page(`<script>document.write('<a rel="me" href="${profileOf(user)}">')</script>`, "<!-- -->"),
    });
    await update(user, [
      { name: "No rel", value: noRel },
      { name: "Other", value: otherProfile },
      { name: "404", value: notFound },
      { name: "Script", value: inScript },
    ]);
    await runJobs();
    assert.deepEqual(await verifiedAts(user), [null, null, null, null]);
    for (const path of ["norel", "other", "gone", "script"]) assert.equal(sites.hitsOf(`/${path}/${user.username}`), 1);
  });

  test("values that are not https URLs with a plain host are not fetched", async () => {
    const user = await freshUser();
    const linking = { body: page("", `<a rel="me" href="${profileOf(user)}">me</a>`) };
    for (const path of ["/plain", "/http", "/upper", "/bare"]) sites.pages.set(`${path}/${user.username}`, linking);
    await update(user, [
      { name: "Words", value: "my site is links.test" },
      { name: "No scheme", value: `links.test:${sites.port}/bare/${user.username}` },
      { name: "Http", value: `http://links.test:${sites.port}/http/${user.username}` },
      { name: "Upper", value: `https://LINKS.test:${sites.port}/upper/${user.username}` },
    ]);
    await runJobs();
    assert.deepEqual(await verifiedAts(user), [null, null, null, null]);
    for (const path of ["/plain", "/http", "/upper", "/bare"])
      assert.equal(sites.hitsOf(`${path}/${user.username}`), 0);
  });

  test("a changed value loses its verification; a renamed field keeps it and is not fetched again", async () => {
    const user = await freshUser();
    const url = sites.serve(`/keep/${user.username}`, {
      body: page("", `<a rel="me" href="${profileOf(user)}">me</a>`),
    });
    const elsewhere = sites.serve(`/elsewhere/${user.username}`, { body: page("", "<p>nothing here</p>") });
    await update(user, [{ name: "Web", value: url }]);
    await runJobs();
    const [first] = await verifiedAts(user);
    assert.match(first ?? "", VERIFIED_AT);

    const renamed = await update(user, [{ name: "Home page", value: url }]);
    assert.equal(renamed.json<CredentialAccount>().fields[0].verified_at, first);
    await runJobs();
    assert.deepEqual(await verifiedAts(user), [first]);
    assert.equal(sites.hitsOf(`/keep/${user.username}`), 1);

    const changed = await update(user, [{ name: "Home page", value: elsewhere }]);
    assert.equal(changed.json<CredentialAccount>().fields[0].verified_at, null);
    await runJobs();
    assert.deepEqual(await verifiedAts(user), [null]);
    assert.equal(sites.hitsOf(`/elsewhere/${user.username}`), 1);
  });

  test("unreachable, refused, silent and huge pages leave fields unverified and the job done", async () => {
    const user = await freshUser();
    const linking = page("", `<a rel="me" href="${profileOf(user)}">me</a>`);
    const silent = sites.serve(`/silent/${user.username}`, { silent: true });
    // The link comes first, but the page is more than the 1 MiB read.
    const huge = sites.serve(`/huge/${user.username}`, { body: linking, padding: 2 * 1024 * 1024 });
    const res = await update(user, [
      { name: "Down", value: `https://links.test:${await closedPort()}/down` },
      { name: "Private", value: `https://private.test/${user.username}` },
      { name: "Silent", value: silent },
      { name: "Huge", value: huge },
    ]);
    assert.deepEqual(
      res.json<CredentialAccount>().fields.map((f) => f.verified_at),
      [null, null, null, null],
    );
    assert.equal(sites.hitsOf(`/silent/${user.username}`), 0);
    await runJobs();
    assert.deepEqual(await verifiedAts(user), [null, null, null, null]);
    assert.equal(sites.hitsOf(`/silent/${user.username}`), 1);
    assert.equal(sites.hitsOf(`/huge/${user.username}`), 1);
  });

  test("a profile update without link fields fetches nothing", async () => {
    const user = await freshUser();
    const before = [...sites.hits.values()].reduce((a, b) => a + b, 0);
    const res = await request(server.app, "PATCH", UPDATE, { token: user.token, form: { display_name: "Linker" } });
    assert.equal(res.statusCode, 200, res.body);
    await runJobs();
    assert.equal(
      [...sites.hits.values()].reduce((a, b) => a + b, 0),
      before,
    );
  });
});
