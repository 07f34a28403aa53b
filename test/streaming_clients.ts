/**
 * Real streaming clients for tests: a WebSocket client (the `ws` package, as masto.js-based clients
 * behave: token as the subprotocol) and an SSE client over plain HTTP, each collecting what arrives
 * and waiting for the frame a test expects.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import WebSocket from "ws";
import type { TestServer } from "./kit.ts";

/** Starts the test server on an ephemeral port; returns `127.0.0.1:<port>`. */
export async function listen(server: TestServer): Promise<string> {
  await server.app.listen({ port: 0, host: "127.0.0.1" });
  return `127.0.0.1:${(server.app.server.address() as AddressInfo).port}`;
}

export interface Frame {
  stream?: string[];
  event?: string;
  payload?: string;
  error?: string;
  status?: number;
}

/** Waits until `find` returns something for the collected items, or fails after `ms`. */
class Collector<T> {
  readonly items: T[] = [];
  #waiters: Array<() => void> = [];

  push(item: T): void {
    this.items.push(item);
    for (const wake of this.#waiters.splice(0)) wake();
  }

  async next(find: (item: T) => boolean, ms = 5000, what = "a frame"): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const found = this.items.find(find);
      if (found) {
        this.items.splice(this.items.indexOf(found), 1);
        return found;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.items)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Fails if anything matching `find` arrives within `ms`. */
  async none(find: (item: T) => boolean, ms = 400): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, ms));
    const found = this.items.find(find);
    if (found) throw new Error(`unexpected ${JSON.stringify(found)}`);
  }
}

export interface WsOptions {
  /** How the token travels: as the subprotocol (default), a query parameter or a header. */
  tokenIn?: "protocol" | "query" | "header";
  query?: string;
}

export class WsClient {
  readonly ws: WebSocket;
  readonly frames = new Collector<Frame>();
  readonly closed: Promise<number>;

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on("message", (data) => this.frames.push(JSON.parse(data.toString()) as Frame));
    this.closed = new Promise((resolve) => ws.on("close", (code) => resolve(code)));
  }

  static connect(host: string, token: string, options: WsOptions = {}): Promise<WsClient> {
    const tokenIn = options.tokenIn ?? "protocol";
    const query = [options.query, tokenIn === "query" ? `access_token=${token}` : undefined].filter(Boolean).join("&");
    const url = `ws://${host}/api/v1/streaming${query ? `?${query}` : ""}`;
    const ws =
      tokenIn === "protocol"
        ? new WebSocket(url, token)
        : new WebSocket(url, tokenIn === "header" ? { headers: { authorization: `Bearer ${token}` } } : {});
    const client = new WsClient(ws);
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(client));
      ws.once("unexpected-response", (_req, res) =>
        reject(new UpgradeRefused(res.statusCode ?? 0, String(res.headers["x-error-message"] ?? ""))),
      );
      ws.once("error", reject);
    });
  }

  send(message: object): void {
    this.ws.send(JSON.stringify(message));
  }

  subscribe(stream: string, extra: Record<string, string> = {}): void {
    this.send({ type: "subscribe", stream, ...extra });
  }

  /** The next event named `event` whose payload satisfies `match`. */
  event(event: string, match: (payload: string | undefined, frame: Frame) => boolean = () => true, ms?: number) {
    return this.frames.next((f) => f.event === event && match(f.payload, f), ms, `event ${event}`);
  }

  close(): void {
    this.ws.terminate();
  }
}

export class UpgradeRefused extends Error {
  readonly status: number;
  readonly reason: string;
  constructor(status: number, reason: string) {
    super(`upgrade refused: ${status} ${reason}`);
    this.status = status;
    this.reason = reason;
  }
}

export interface SseEvent {
  event: string;
  data: string;
}

export class SseClient {
  readonly response: IncomingMessage;
  readonly events = new Collector<SseEvent>();
  text = "";
  #buffer = "";

  private constructor(response: IncomingMessage) {
    this.response = response;
    response.setEncoding("utf8");
    response.on("data", (chunk: string) => {
      this.text += chunk;
      this.#buffer += chunk;
      let end: number;
      while ((end = this.#buffer.indexOf("\n\n")) >= 0) {
        const block = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 2);
        const lines = block.split("\n").filter((l) => !l.startsWith(":"));
        const event = lines.find((l) => l.startsWith("event: "))?.slice(7);
        const data = lines.find((l) => l.startsWith("data: "))?.slice(6) ?? lines.find((l) => l === "data:") ?? "";
        if (event) this.events.push({ event, data });
      }
    });
  }

  /** Opens `path`; resolves with the client for a 200, or with the status and body otherwise. */
  static open(host: string, path: string, token?: string): Promise<SseClient | { status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        `http://${host}${path}`,
        { headers: token ? { authorization: `Bearer ${token}` } : {} },
        (res) => {
          if (res.statusCode !== 200) {
            let body = "";
            res.setEncoding("utf8");
            res.on("data", (c: string) => (body += c));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
            return;
          }
          resolve(new SseClient(res));
        },
      );
      req.on("error", reject);
      req.end();
    });
  }

  event(event: string, match: (data: string) => boolean = () => true, ms?: number) {
    return this.events.next((e) => e.event === event && match(e.data), ms, `event ${event}`);
  }

  close(): void {
    this.response.destroy();
  }
}
