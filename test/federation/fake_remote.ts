/**
 * A fake fediverse for replaying activities into a Rookery under test: one HTTPS server (on one
 * loopback port, with the certificate of pki.ts `makePki`) that answers for several host
 * names — mastodon.example, gts.example, misskey.example, akkoma.example, evil.example, … — by the
 * Host header. Each host serves, from memory, its actors' documents (the fixtures of
 * fixtures/*_actor.json with their origin rewritten to `https://HOST:PORT` and a fresh RSA key),
 * WebFinger for `acct:user@HOST:PORT`, and any object registered with `serve` (notes, contexts).
 * Every request it gets is recorded (what Rookery fetched, what it delivered), and every POST is
 * answered 202, as an inbox would.
 *
 * `deliver` sends an activity to Rookery's inbox over real HTTPS, signed the way the actor's
 * server signs: draft-cavage with Mastodon's header list, GoToSocial's `hs2019` label and
 * `…/main-key` key id, Misskey's and Akkoma's header orders; or RFC 9421 (Fedify's `signRequest`,
 * or this module's own signer when a test chooses the covered components). `ldSigned` adds a
 * Linked Data signature to a body. Options make the hostile variants: a body changed after
 * signing, an old Date, another actor's key or another key id, no signature, a signature that
 * covers less.
 *
 * The activities themselves are JSON fixtures (fixtures/activities/*.json) with `{{name}}`
 * placeholders, filled by `activity()`.
 */
import { createHash, randomUUID, webcrypto } from "node:crypto";
import { readFileSync } from "node:fs";
import type { RequestListener } from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { getDocumentLoader, signJsonLd, signRequest } from "@fedify/fedify";
import tls from "node:tls";
import { installOutboundAgent } from "../../src/services/http/outbound.ts";
import { createTestServer, type TestServer } from "../kit.ts";
import { makePki, removePki, tlsFront, type Pki } from "./pki.ts";

const FIXTURES = join(import.meta.dirname, "fixtures");
const AS_PUBLIC = "https://www.w3.org/ns/activitystreams#Public";

/** How a server software signs its POSTs with draft-cavage (reference/federation.md §6.1, §11). */
export type Software = "mastodon" | "gotosocial" | "misskey" | "akkoma";

interface CavageProfile {
  algorithm: string;
  headers: string[];
  contentType: string;
}

const PROFILES: Record<Software, CavageProfile> = {
  mastodon: {
    algorithm: "rsa-sha256",
    headers: ["(request-target)", "host", "date", "digest", "content-type"],
    contentType: "application/activity+json",
  },
  gotosocial: {
    algorithm: "hs2019",
    headers: ["(request-target)", "host", "date", "digest"],
    contentType: "application/activity+json; charset=utf-8",
  },
  misskey: {
    algorithm: "rsa-sha256",
    headers: ["(request-target)", "date", "host", "digest"],
    contentType: "application/activity+json",
  },
  akkoma: {
    algorithm: "rsa-sha256",
    headers: ["(request-target)", "date", "digest", "host"],
    contentType: "application/activity+json",
  },
};

/** Where each actor fixture lives, to be rewritten: its origin and its username in ids. */
const FIXTURE_ORIGINS: Record<Software, { file: string; origin: string; idName: string; username: string }> = {
  mastodon: { file: "mastodon_actor.json", origin: "https://mastodon.example", idName: "Gargron", username: "Gargron" },
  gotosocial: { file: "gotosocial_actor.json", origin: "https://gts.example", idName: "tobi", username: "tobi" },
  misskey: { file: "misskey_actor.json", origin: "https://misskey.example", idName: "9abc0001", username: "syuilo" },
  akkoma: { file: "akkoma_actor.json", origin: "https://akkoma.example", idName: "lain", username: "lain" },
};

export interface FakeActor {
  /** The name tests use for it (e.g. "mastodon"). */
  name: string;
  software: Software;
  /** The host name without the port (e.g. mastodon.example). */
  host: string;
  /** `https://HOST:PORT`. */
  origin: string;
  /** The actor id. */
  id: string;
  keyId: string;
  username: string;
  inbox: string;
  sharedInbox: string | null;
  followers: string;
  privateKey: webcrypto.CryptoKey;
  document: Record<string, unknown>;
}

export interface ActorSpec {
  name: string;
  /** Which fixture the actor is made from (its document, and how its server signs). */
  software: Software;
  host: string;
  /** Replaces the fixture's username (ids and preferredUsername); keeps it by default. */
  username?: string;
}

export interface RecordedRequest {
  method: string;
  /** The host name the request was for (Host header, without the port). */
  host: string;
  /** Path and query. */
  path: string;
  headers: Record<string, string>;
  body: string;
}

export interface DeliverOptions {
  /** The actor whose key signs (by name or itself). */
  actor: FakeActor | string;
  /** The key id the signature names (the actor's own by default). */
  keyId?: string;
  /** draft-cavage (default, in the actor's software's style), RFC 9421, or no signature at all. */
  spec?: "draft-cavage-http-signatures-12" | "rfc9421" | "none";
  /** Changes the body after it was signed. */
  tamper?: (body: string) => string;
  /** The Date header to sign (default now). */
  date?: Date;
  /**
   * RFC 9421 only: the covered components, signed by this module (with `host` and
   * `content-digest` headers sent whether covered or not); Fedify's `signRequest` and its default
   * set when absent.
   */
  components?: string[];
  contentType?: string;
  /**
   * An origin to connect to instead of the target's (e.g. the server's own plain HTTP port); the
   * URL, the Host header and the signature still name the target.
   */
  via?: string;
}

export interface DeliveryResult {
  status: number;
  body: string;
}

/** The base URL of a Rookery server (a TestServer, or the URL itself). */
type Target = { config: { baseUrl: string } } | string;

export interface FakeRemote {
  port: number;
  /** `https://HOST:PORT`. */
  origin(host: string): string;
  actor(name: string): FakeActor;
  /** Makes an actor (with a fresh key) and serves its document and WebFinger. */
  addActor(spec: ActorSpec): Promise<FakeActor>;
  /** Serves `document` at `url` (an https URL on one of the fake hosts). */
  serve(url: string, document: unknown, contentType?: string): void;
  /** Every request received, oldest first. */
  readonly requests: RecordedRequest[];
  /** POSTs received whose JSON body has this `type`. */
  posted(type: string): Array<RecordedRequest & { json: Record<string, unknown> }>;
  /** Signs and sends `activity` (an object, or a raw body) to `path` on the target. */
  deliver(target: Target, path: string, activity: unknown, options: DeliverOptions): Promise<DeliveryResult>;
  close(): Promise<void>;
}

const pemOf = (spki: ArrayBuffer) =>
  `-----BEGIN PUBLIC KEY-----\n${(
    Buffer.from(spki)
      .toString("base64")
      .match(/.{1,64}/g) ?? []
  ).join("\n")}\n-----END PUBLIC KEY-----\n`;

async function rsaKeyPair(): Promise<webcrypto.CryptoKeyPair> {
  return webcrypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  );
}

/**
 * Starts the fake servers (all hosts on one loopback port; `alsoOn` lists more loopback addresses
 * that answer on the same port, for hosts a test maps to an address Rookery may not reach); add
 * actors with `addActor`.
 */
export async function startFakeRemote(pki: Pki, alsoOn: string[] = []): Promise<FakeRemote> {
  const documents = new Map<string, { body: string; contentType: string }>();
  const actors = new Map<string, FakeActor>();
  const requests: RecordedRequest[] = [];
  /** Hosts that answer only signed GETs (GoToSocial always wants them). */
  const signedFetchHosts = new Set<string>();

  const handler: RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const hostHeader = String(req.headers.host ?? "");
      const host = hostHeader.replace(/:\d+$/, "").toLowerCase();
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers))
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
      const path = req.url ?? "/";
      requests.push({ method: req.method ?? "GET", host, path, headers, body: Buffer.concat(chunks).toString("utf8") });
      if (req.method === "POST") {
        res.writeHead(202).end();
        return;
      }
      const url = new URL(path, `https://${hostHeader}`);
      if (url.pathname === "/.well-known/webfinger") {
        const resource = url.searchParams.get("resource") ?? "";
        const found = [...actors.values()].find(
          (actor) =>
            actor.host === host &&
            (resource.toLowerCase() === `acct:${actor.username.toLowerCase()}@${host}:${port}` ||
              resource === actor.id),
        );
        if (!found) {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { "content-type": "application/jrd+json; charset=utf-8" }).end(
          JSON.stringify({
            subject: `acct:${found.username}@${host}:${port}`,
            aliases: [found.id],
            links: [
              { rel: "http://webfinger.net/rel/profile-page", type: "text/html", href: found.id },
              { rel: "self", type: "application/activity+json", href: found.id },
            ],
          }),
        );
        return;
      }
      const document = documents.get(`${url.origin}${url.pathname}`);
      if (!document) {
        res.writeHead(404, { "content-type": "application/json" }).end('{"error":"Not found"}');
        return;
      }
      if (signedFetchHosts.has(host) && !headers.signature && !headers["signature-input"]) {
        res.writeHead(401, { "content-type": "application/json" }).end('{"error":"signature required"}');
        return;
      }
      res.writeHead(200, { "content-type": document.contentType }).end(document.body);
    });
  };
  const listen = (server: https.Server, port: number, address: string) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, address, resolve);
    });
  const main = https.createServer({ key: pki.key, cert: pki.cert }, handler);
  await listen(main, 0, "127.0.0.1");
  const port = (main.address() as AddressInfo).port;
  const servers = [main];
  for (const address of alsoOn) {
    const extra = https.createServer({ key: pki.key, cert: pki.cert }, handler);
    await listen(extra, port, address);
    servers.push(extra);
  }
  const origin = (host: string) => `https://${host}:${port}`;

  const serve = (url: string, document: unknown, contentType = "application/activity+json") => {
    const parsed = new URL(url);
    documents.set(`${parsed.origin}${parsed.pathname}`, {
      body: typeof document === "string" ? document : JSON.stringify(document),
      contentType,
    });
  };

  const actor = (name: string): FakeActor => {
    const found = actors.get(name);
    if (!found) throw new Error(`no fake actor ${name}`);
    return found;
  };

  async function addActor(spec: ActorSpec): Promise<FakeActor> {
    const fixture = FIXTURE_ORIGINS[spec.software];
    const keys = await rsaKeyPair();
    const pem = pemOf(await webcrypto.subtle.exportKey("spki", keys.publicKey));
    let text = readFileSync(join(FIXTURES, fixture.file), "utf8")
      .replaceAll(fixture.origin, origin(spec.host))
      .replace("__PUBLIC_KEY__", pem.replaceAll("\n", "\\n"));
    if (spec.username)
      text = text.replaceAll(fixture.idName, spec.username).replaceAll(fixture.username, spec.username);
    const document = JSON.parse(text) as Record<string, unknown>;
    const publicKey = document.publicKey as { id: string };
    const endpoints = document.endpoints as { sharedInbox?: string } | undefined;
    const made: FakeActor = {
      name: spec.name,
      software: spec.software,
      host: spec.host,
      origin: origin(spec.host),
      id: document.id as string,
      keyId: publicKey.id,
      username: document.preferredUsername as string,
      inbox: document.inbox as string,
      sharedInbox: endpoints?.sharedInbox ?? null,
      followers: document.followers as string,
      privateKey: keys.privateKey,
      document,
    };
    actors.set(spec.name, made);
    serve(made.id, document);
    // A key id that is a document of its own (GoToSocial's …/main-key) serves the actor's stub, as GoToSocial does.
    if (!made.keyId.includes("#"))
      serve(made.keyId, {
        "@context": ["https://w3id.org/security/v1", "https://www.w3.org/ns/activitystreams"],
        id: made.id,
        type: document.type,
        preferredUsername: made.username,
        publicKey,
      });
    if (spec.software === "gotosocial") signedFetchHosts.add(spec.host);
    if (spec.software === "akkoma")
      serve(
        `${made.origin}/schemas/litepub-0.1.jsonld`,
        readFileSync(join(FIXTURES, "litepub-0.1.jsonld"), "utf8"),
        "application/ld+json",
      );
    return made;
  }

  async function deliver(
    target: Target,
    path: string,
    activity: unknown,
    options: DeliverOptions,
  ): Promise<DeliveryResult> {
    const named = typeof options.actor === "string" ? actor(options.actor) : options.actor;
    const signer = options.keyId ? { ...named, keyId: options.keyId } : named;
    const profile = PROFILES[signer.software];
    const base = typeof target === "string" ? target : target.config.baseUrl;
    const url = new URL(path, base);
    const body = typeof activity === "string" ? activity : JSON.stringify(activity);
    const bytes = new TextEncoder().encode(body);
    const headers = new Headers({
      "content-type": options.contentType ?? profile.contentType,
      accept: "application/activity+json, application/ld+json",
      "user-agent": `FakeRemote (${signer.software}; +${signer.origin}/)`,
    });
    if (options.date) headers.set("date", options.date.toUTCString());
    const spec = options.spec ?? "draft-cavage-http-signatures-12";
    let sent = headers;
    if (spec === "draft-cavage-http-signatures-12") {
      headers.set("host", url.host);
      headers.set("digest", `SHA-256=${createHash("sha256").update(bytes).digest("base64")}`);
      if (!headers.has("date")) headers.set("date", new Date().toUTCString());
      const signed = profile.headers
        .map((name) =>
          name === "(request-target)"
            ? `(request-target): post ${url.pathname}`
            : `${name}: ${headers.get(name) ?? ""}`,
        )
        .join("\n");
      const signature = await webcrypto.subtle.sign(
        "RSASSA-PKCS1-v1_5",
        signer.privateKey,
        new TextEncoder().encode(signed),
      );
      headers.set(
        "signature",
        `keyId="${signer.keyId}",algorithm="${profile.algorithm}",headers="${profile.headers.join(" ")}",signature="${Buffer.from(signature).toString("base64")}"`,
      );
    } else if (spec === "rfc9421" && options.components) {
      // Signed here rather than by Fedify, which always adds content-digest to what it covers.
      headers.set("host", url.host);
      headers.set("content-digest", `sha-256=:${createHash("sha256").update(bytes).digest("base64")}:`);
      const created = Math.floor((options.date ?? new Date()).getTime() / 1000);
      const value = (component: string) =>
        component === "@method"
          ? "POST"
          : component === "@target-uri"
            ? url.href
            : component === "@authority"
              ? url.host.toLowerCase()
              : (headers.get(component) ?? "");
      const params = `(${options.components.map((c) => `"${c}"`).join(" ")});alg="rsa-v1_5-sha256";keyid="${signer.keyId}";created=${created}`;
      const base = [...options.components.map((c) => `"${c}": ${value(c)}`), `"@signature-params": ${params}`].join(
        "\n",
      );
      const signature = await webcrypto.subtle.sign(
        "RSASSA-PKCS1-v1_5",
        signer.privateKey,
        new TextEncoder().encode(base),
      );
      headers.set("signature-input", `sig1=${params}`);
      headers.set("signature", `sig1=:${Buffer.from(signature).toString("base64")}:`);
    } else if (spec === "rfc9421") {
      const request = new Request(url, { method: "POST", headers, body: bytes });
      const signedRequest = await signRequest(request, signer.privateKey, new URL(signer.keyId), { spec: "rfc9421" });
      sent = new Headers(signedRequest.headers);
    }
    const payload = options.tamper ? options.tamper(body) : body;
    if (!sent.has("host")) sent.set("host", url.host);
    const connectTo = options.via ? new URL(`${url.pathname}${url.search}`, options.via) : url;
    const response = await fetch(connectTo, { method: "POST", headers: sent, body: payload });
    return { status: response.status, body: await response.text() };
  }

  return {
    port,
    origin,
    actor,
    addActor,
    serve,
    requests,
    posted(type) {
      const found: Array<RecordedRequest & { json: Record<string, unknown> }> = [];
      for (const request of requests) {
        if (request.method !== "POST") continue;
        try {
          const json = JSON.parse(request.body) as Record<string, unknown>;
          if (json.type === type) found.push({ ...request, json });
        } catch {
          // not JSON: not an activity
        }
      }
      return found;
    },
    deliver,
    async close() {
      for (const server of servers) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    },
  };
}

/**
 * `activity` with a Linked Data signature (RsaSignature2017, as Mastodon attaches to public
 * activities) by `actor`'s key, or by the key `keyId` names.
 */
export async function ldSigned(
  activity: Record<string, unknown>,
  actor: FakeActor,
  keyId = actor.keyId,
): Promise<Record<string, unknown>> {
  return (await signJsonLd(activity, actor.privateKey, new URL(keyId), {
    contextLoader: getDocumentLoader(),
  })) as unknown as Record<string, unknown>;
}

let counter = 0;

/** A fresh numeric id, in the style of Mastodon's snowflakes (unique in this process). */
export function nextId(): string {
  counter += 1;
  return `${Date.now()}${String(counter).padStart(4, "0")}`;
}

/**
 * The fixture fixtures/activities/`name`.json with its `{{placeholders}}` filled from `vars`
 * (strings, JSON-escaped). `n`, `uuid`, `published`, `updated` and `epoch` get fresh values unless
 * given. A placeholder without a value is an error, so a fixture cannot go out half-filled.
 */
export function activity(name: string, vars: Record<string, string>): Record<string, unknown> {
  const now = new Date();
  const values: Record<string, string> = {
    n: nextId(),
    uuid: randomUUID(),
    published: now.toISOString(),
    updated: now.toISOString(),
    epoch: String(Math.floor(now.getTime() / 1000)),
    public: AS_PUBLIC,
    ...vars,
  };
  const text = readFileSync(join(FIXTURES, "activities", `${name}.json`), "utf8").replace(
    /\{\{(\w+)\}\}/g,
    (_, key: string) => {
      const value = values[key];
      if (value === undefined) throw new Error(`${name}.json: no value for {{${key}}}`);
      return JSON.stringify(value).slice(1, -1);
    },
  );
  return JSON.parse(text) as Record<string, unknown>;
}

/** The origins the recorded activities are filled in with by `recordedActivity` (nothing serves them). */
export const RECORDED_ORIGINS = {
  mastodon: "https://mastodon.example",
  akkoma: "https://akkoma.example",
  gts: "https://gts.example",
  misskey: "https://misskey.example",
};

/** A recorded activity filled in with fixed values, for tests that only read it. */
export function recordedActivity(name: string): Record<string, unknown> {
  return activity(name, {
    ...RECORDED_ORIGINS,
    actor: `${RECORDED_ORIGINS.mastodon}/users/alice`,
    activityId: `${RECORDED_ORIGINS.mastodon}/users/alice/statuses/1/activity`,
    attributedTo: `${RECORDED_ORIGINS.mastodon}/users/alice`,
    inReplyTo: "https://rookery.test/users/frank/statuses/1",
    mentionedName: "@frank@rookery.test",
    mentionedUrl: "https://rookery.test/@frank",
    noteId: `${RECORDED_ORIGINS.mastodon}/users/alice/statuses/1`,
    rookeryDomain: "rookery.test",
    alt: "a picture",
    author: `${RECORDED_ORIGINS.mastodon}/users/bob`,
    blurhash: "LEHV6nWB2yk8pyo0adR*.7kCMdnj",
    context: "c1",
    conversation: "tag:mastodon.example,2026-11-27:objectId=1:objectType=Conversation",
    followed: `${RECORDED_ORIGINS.mastodon}/users/carol`,
    follower: `${RECORDED_ORIGINS.gts}/users/dave`,
    follow: `${RECORDED_ORIGINS.gts}/follows/1`,
    liker: `${RECORDED_ORIGINS.misskey}/users/erin`,
    like: `${RECORDED_ORIGINS.misskey}/likes/1`,
    mentioned: "https://rookery.test/users/frank",
    object: `${RECORDED_ORIGINS.mastodon}/users/bob/statuses/1`,
    quote: `${RECORDED_ORIGINS.mastodon}/users/bob/statuses/2`,
    text: '<p>Hello, <a href="https://rookery.test/@frank">@frank</a> #fediverse</p>',
    n: "113",
    uuid: "6f1b4f5e-2f47-4d0b-9b1c-0a3c9d3f1e21",
    published: "2026-11-27T08:00:00Z",
    updated: "2026-11-27T08:05:00Z",
    epoch: "1795766400",
  });
}

export interface ServerBesideFakes {
  /** The Rookery server, `https://rookery.test:PORT` behind a TLS front, its job workers running. */
  server: TestServer;
  fake: FakeRemote;
  close(): Promise<void>;
}

/**
 * One Rookery server beside the fake servers `hosts` (e.g. `keys.example`), all trusting one
 * throwaway CA, host names mapped to loopback as in production with loopback allowed; `env` adds
 * configuration (e.g. AUTHORIZED_FETCH). The fake servers get their actors with `fake.addActor`.
 */
export async function startServerBesideFakes(
  hosts: string[],
  env: Record<string, string> = {},
): Promise<ServerBesideFakes> {
  const pki = makePki(["rookery.test", ...hosts]);
  tls.setDefaultCACertificates([...tls.getCACertificates("default"), pki.caPem]);
  const fake = await startFakeRemote(pki);
  let rookeryPort = 0;
  const front = await tlsFront(pki, () => rookeryPort);
  const server = await createTestServer({
    env: {
      LOCAL_DOMAIN: `rookery.test:${(front.address() as AddressInfo).port}`,
      LOCAL_HTTPS: "true",
      ALLOWED_PRIVATE_ADDRESSES: "127.0.0.1/32",
      OUTBOUND_HOSTS: ["rookery.test", ...hosts].map((host) => `${host}=127.0.0.1`).join(","),
      ...env,
    },
  });
  await server.app.listen({ port: 0, host: "127.0.0.1" });
  rookeryPort = (server.app.server.address() as AddressInfo).port;
  await server.ctx.jobs.start({ concurrency: 2, pollInterval: 50 });
  installOutboundAgent(server.config);
  return {
    server,
    fake,
    async close() {
      await server.close();
      await new Promise((resolve) => front.close(resolve));
      await fake.close();
      removePki(pki);
    },
  };
}
