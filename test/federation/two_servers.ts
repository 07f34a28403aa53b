/**
 * Real Rookery servers that federate with each other on loopback, each under its own host name
 * with HTTPS (reference/federation.md §12.1): a throwaway CA made with openssl at the start,
 * trusted by this process; each server behind a TLS front that forwards to its Fastify port; host
 * names mapped to 127.0.0.1 by OUTBOUND_HOSTS, which ALLOWED_PRIVATE_ADDRESSES lets through the
 * outbound agent (the same SSRF rules as in production, only loopback allowed). Job workers run,
 * so deliveries and received activities flow as they would between two machines.
 */
import type { AddressInfo } from "node:net";
import tls from "node:tls";
import { installOutboundAgent } from "../../src/services/http/outbound.ts";
import assert from "node:assert/strict";
import { createTestServer, eventually, request, type TestServer, type TestUser } from "../kit.ts";
import { makePki, removePki, tlsFront } from "./pki.ts";

export interface Peer {
  server: TestServer;
  /** `a.test:PORT`: the domain in handles and URLs. */
  domain: string;
  baseUrl: string;
}

export interface Peers {
  peers: Peer[];
  /** The throwaway CA's certificate (PEM file), for clients that should trust the servers. */
  caFile: string;
  close(): Promise<void>;
}

/**
 * Starts one server per host name (e.g. `a.test`, `b.test`), all trusting one another's TLS;
 * `env` adds configuration to every server, or to each by its host name.
 */
export async function startPeers(
  hosts: string[],
  env: Record<string, string> | ((host: string) => Record<string, string>) = {},
): Promise<Peers> {
  const pki = makePki(hosts);
  tls.setDefaultCACertificates([...tls.getCACertificates("default"), pki.caPem]);
  const ports = new Map<string, number>();
  const fronts = await Promise.all(hosts.map((host) => tlsFront(pki, () => ports.get(host) ?? 0)));
  const outbound = hosts.map((host) => `${host}=127.0.0.1`).join(",");
  const peers: Peer[] = [];
  for (const [i, host] of hosts.entries()) {
    const domain = `${host}:${(fronts[i]!.address() as AddressInfo).port}`;
    const server = await createTestServer({
      env: {
        LOCAL_DOMAIN: domain,
        LOCAL_HTTPS: "true",
        ALLOWED_PRIVATE_ADDRESSES: "127.0.0.1/32",
        OUTBOUND_HOSTS: outbound,
        ...(typeof env === "function" ? env(host) : env),
      },
    });
    await server.app.listen({ port: 0, host: "127.0.0.1" });
    ports.set(host, (server.app.server.address() as AddressInfo).port);
    await server.ctx.jobs.start({ concurrency: 4, pollInterval: 50 });
    peers.push({ server, domain, baseUrl: server.config.baseUrl });
  }
  // The rules of production for every fetch() in this process, with loopback allowed.
  installOutboundAgent(peers[0]!.server.config);
  return {
    peers,
    caFile: pki.caFile,
    async close() {
      for (const peer of peers) await peer.server.close();
      for (const front of fronts) await new Promise((resolve) => front.close(resolve));
      removePki(pki);
    },
  };
}

/** `viewer` (on `peer`) finds `handle` through search with resolve, as clients do; exactly one account. */
export async function resolveOn(peer: Peer, viewer: TestUser, handle: string): Promise<{ id: string; acct: string }> {
  const res = await request(
    peer.server.app,
    "GET",
    `/api/v2/search?q=${encodeURIComponent(handle)}&resolve=true&type=accounts`,
    { token: viewer.token },
  );
  assert.equal(res.statusCode, 200, res.body);
  const accounts = res.json().accounts as Array<{ id: string; acct: string }>;
  assert.equal(accounts.length, 1, `${handle} found: ${res.body}`);
  return accounts[0]!;
}

/**
 * `x` (on `px`) and `y` (on `py`) follow each other, both unlocked; returns each one's id on the
 * other's server once both follows are accepted.
 */
export async function followEachOther(
  px: Peer,
  x: TestUser,
  py: Peer,
  y: TestUser,
): Promise<{ xOnY: string; yOnX: string }> {
  const xOnY = (await resolveOn(py, y, `${x.account.username}@${px.domain}`)).id;
  const yOnX = (await resolveOn(px, x, `${y.account.username}@${py.domain}`)).id;
  await request(py.server.app, "POST", `/api/v1/accounts/${xOnY}/follow`, { token: y.token });
  await request(px.server.app, "POST", `/api/v1/accounts/${yOnX}/follow`, { token: x.token });
  const following = async (peer: Peer, viewer: TestUser, id: string) =>
    (
      await request(peer.server.app, "GET", `/api/v1/accounts/relationships?id[]=${id}`, { token: viewer.token })
    ).json()[0].following === true;
  await eventually(() => following(py, y, xOnY), `${y.account.username} follows ${x.account.username}`);
  await eventually(() => following(px, x, yOnX), `${x.account.username} follows ${y.account.username}`);
  return { xOnY, yOnX };
}
