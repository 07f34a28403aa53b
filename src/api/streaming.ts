/**
 * The streaming API on the API's own port (reference/streaming.md): `GET /api/v1/streaming` as a
 * WebSocket with multiplexed subscriptions, the SSE paths (`/api/v1/streaming/user`, `/public/local`,
 * `/hashtag?tag=`, …), and `/api/v1/streaming/health`. Only frames are made here; what a stream
 * carries is services/streaming/streams.ts.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { WebSocketServer, type WebSocket } from "ws";
import type { Ctx } from "../context.ts";
import { assertFunctionalUser, findViewerByToken, type UserViewer } from "../services/auth/viewer.ts";
import {
  SharedStatusCache,
  StreamConnection,
  StreamError,
  type Deliver,
  type StreamRequest,
} from "../services/streaming/streams.ts";
import { toBoolean, toStringParam } from "./params.ts";

const PING_INTERVAL = 30_000;
const HEARTBEAT_INTERVAL = 15_000;
/** A client that stops reading is dropped once this much waits for it. */
const MAX_BUFFERED = 8 * 1024 * 1024;
const MAX_FRAME = 64 * 1024;

/** The SSE paths and the streams they mean. */
const SSE_PATHS: Record<string, string> = {
  "/api/v1/streaming/user": "user",
  "/api/v1/streaming/user/notification": "user:notification",
  "/api/v1/streaming/public": "public",
  "/api/v1/streaming/public/local": "public:local",
  "/api/v1/streaming/public/remote": "public:remote",
  "/api/v1/streaming/hashtag": "hashtag",
  "/api/v1/streaming/hashtag/local": "hashtag:local",
  "/api/v1/streaming/list": "list",
  "/api/v1/streaming/direct": "direct",
};

function bearer(header: string | string[] | undefined): string | undefined {
  if (typeof header !== "string") return undefined;
  return /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
}

/** The token's user, or a 401 StreamError (missing, or not a working user token). */
async function streamViewer(ctx: Ctx, token: string | undefined): Promise<UserViewer> {
  if (!token) throw new StreamError(401, "Missing access token");
  const viewer = await findViewerByToken(ctx.db.kysely, token);
  if (!viewer || viewer === "revoked" || !viewer.user || viewer.user.disabled || viewer.account?.suspended_at)
    throw new StreamError(401, "Invalid access token");
  try {
    assertFunctionalUser(viewer);
  } catch {
    throw new StreamError(401, "Invalid access token");
  }
  return viewer;
}

/** The stream a WebSocket message or query names (`stream` may be an array: its first item). */
function streamRequest(source: Record<string, unknown>): StreamRequest | undefined {
  const stream = Array.isArray(source.stream) ? source.stream[0] : source.stream;
  if (typeof stream !== "string") return undefined;
  const text = (value: unknown) => (typeof value === "string" || typeof value === "number" ? String(value) : undefined);
  return { stream, tag: text(source.tag), list: text(source.list) };
}

export default async function streamingRoutes(app: FastifyInstance, ctx: Ctx) {
  const shared = new SharedStatusCache();
  const open = new Set<{ close: () => void }>();

  app.get("/api/v1/streaming/health", async (_req, reply) =>
    reply.header("Cache-Control", "private, no-store").type("text/plain").send("OK"),
  );

  const sse = async (req: FastifyRequest, reply: FastifyReply, stream: string | undefined) => {
    const input = req.input;
    try {
      if (!stream) throw new StreamError(400, "Unknown channel requested");
      const viewer = await streamViewer(ctx, bearer(req.headers.authorization) ?? toStringParam(input.access_token));
      const request: StreamRequest = {
        stream,
        tag: toStringParam(input.tag),
        list: toStringParam(input.list),
        onlyMedia: toBoolean(input.only_media) === true,
      };
      await serveEvents(req, reply, viewer, request);
    } catch (error) {
      if (!(error instanceof StreamError)) throw error;
      return reply.code(error.status).send({ error: error.message });
    }
  };

  async function serveEvents(req: FastifyRequest, reply: FastifyReply, viewer: UserViewer, request: StreamRequest) {
    const raw: ServerResponse = reply.raw;
    let heartbeat: NodeJS.Timeout | undefined;
    const write = (text: string) => {
      if (raw.writableLength > MAX_BUFFERED) return end();
      raw.write(text);
    };
    const deliver: Deliver = (_label, event, payload) => write(`event: ${event}\ndata: ${payload ?? ""}\n\n`);
    const connection = new StreamConnection(ctx, viewer, shared, deliver, () => end());
    const handle = { close: () => end() };
    function end() {
      clearInterval(heartbeat);
      connection.close();
      open.delete(handle);
      if (!raw.writableEnded) raw.end();
    }
    await connection.open();
    await connection.subscribe(request).catch((error: unknown) => {
      connection.close();
      throw error;
    });
    reply.hijack();
    open.add(handle);
    raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      "Content-Type": "text/event-stream",
      "Cache-Control": "private, no-store",
      "X-Accel-Buffering": "no",
    });
    raw.write(":)\n");
    heartbeat = setInterval(() => write(":thump\n"), HEARTBEAT_INTERVAL);
    heartbeat.unref();
    req.raw.on("close", end);
  }

  for (const [path, stream] of Object.entries(SSE_PATHS)) app.get(path, (req, reply) => sse(req, reply, stream));
  app.get("/api/v1/streaming/*", (req, reply) => sse(req, reply, undefined));

  // WebSocket: upgrades of /api/v1/streaming on the API's own server.
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FRAME,
    // Clients pass the token as the subprotocol; browsers abort unless it is echoed.
    handleProtocols: (protocols) => protocols.values().next().value ?? false,
  });

  const refuse = (socket: Duplex, status: number, message: string) => {
    const reason = status === 401 ? "Unauthorized" : status === 404 ? "Not Found" : "Error";
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nX-Error-Message: ${message}\r\nContent-Type: text/plain\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`,
    );
  };

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname !== "/api/v1/streaming" && url.pathname !== "/api/v1/streaming/") {
      refuse(socket, 404, "Not Found");
      return;
    }
    const protocol = req.headers["sec-websocket-protocol"]?.split(",")[0]?.trim();
    const token = bearer(req.headers.authorization) ?? url.searchParams.get("access_token") ?? protocol;
    streamViewer(ctx, token ?? undefined).then(
      (viewer) => wss.handleUpgrade(req, socket, head, (ws) => void serveSocket(ws, viewer, url)),
      (error: unknown) => {
        if (error instanceof StreamError) refuse(socket, error.status, error.message);
        else {
          ctx.log.error({ err: error }, "streaming upgrade failed");
          refuse(socket, 500, "An unexpected error occurred");
        }
      },
    );
  };

  async function serveSocket(ws: WebSocket, viewer: UserViewer, url: URL) {
    const send = (frame: object) => {
      if (ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount > MAX_BUFFERED) return ws.terminate();
      ws.send(JSON.stringify(frame));
    };
    const deliver: Deliver = (label, event, payload) =>
      send(payload === undefined ? { stream: label, event } : { stream: label, event, payload });
    const connection = new StreamConnection(ctx, viewer, shared, deliver, () => ws.close(1000));
    const handle = { close: () => ws.terminate() };
    open.add(handle);
    let alive = true;
    const ping = setInterval(() => {
      if (!alive) return ws.terminate();
      alive = false;
      ws.ping();
    }, PING_INTERVAL);
    ping.unref();
    ws.on("pong", () => (alive = true));
    ws.on("close", () => {
      clearInterval(ping);
      connection.close();
      open.delete(handle);
    });
    ws.on("error", () => ws.terminate());

    const act = async (type: "subscribe" | "unsubscribe", request: StreamRequest) => {
      try {
        if (type === "subscribe") await connection.subscribe(request);
        else if (!(await connection.unsubscribe(request))) send({ error: "Error unsubscribing from channel" });
      } catch (error) {
        if (error instanceof StreamError) send({ error: error.message, status: error.status });
        else {
          ctx.log.error({ err: error }, "stream subscription failed");
          send({ error: "An unexpected error occurred", status: 500 });
        }
      }
    };

    ws.on("message", (data, isBinary) => {
      if (isBinary) return ws.close(1003, "Binary frames are not accepted");
      let message: unknown;
      try {
        message = JSON.parse(data.toString());
      } catch {
        return;
      }
      if (typeof message !== "object" || message === null) return;
      const { type } = message as { type?: unknown };
      if (type !== "subscribe" && type !== "unsubscribe") return;
      const request = streamRequest(message as Record<string, unknown>);
      if (request) void act(type, request);
    });

    await connection.open();
    const initial = streamRequest(Object.fromEntries(url.searchParams));
    if (initial) await act("subscribe", initial);
  }

  app.server.on("upgrade", onUpgrade);
  app.addHook("onClose", async () => {
    app.server.off("upgrade", onUpgrade);
    for (const handle of Array.from(open)) handle.close();
    wss.close();
  });
}
