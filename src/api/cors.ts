import type { FastifyInstance } from "fastify";

const EXPOSED_HEADERS =
  "Link, Mastodon-Async-Refresh, X-RateLimit-Reset, X-RateLimit-Limit, X-RateLimit-Remaining, X-Request-Id, Idempotency-Key";

/** Paths browser clients call cross-origin, as Mastodon's rack-cors configuration allows. */
const CORS_PATH = /^\/(?:api\/|oauth\/(?:token|revoke|userinfo)|\.well-known\/|nodeinfo\/|@[^/]+|users\/)/;

/** CORS like Mastodon: any origin, no credentials, any request headers; the API's headers exposed. */
export function registerCors(app: FastifyInstance): void {
  app.addHook("onRequest", async (req, reply) => {
    if (!CORS_PATH.test(req.url)) return;
    reply.header("Access-Control-Allow-Origin", "*");
    reply.header("Access-Control-Expose-Headers", EXPOSED_HEADERS);
  });

  app.options("/*", async (req, reply) => {
    if (!CORS_PATH.test(req.url)) return reply.code(404).send({ error: "Not Found" });
    const requested = req.headers["access-control-request-headers"];
    reply.header("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, OPTIONS");
    reply.header(
      "Access-Control-Allow-Headers",
      typeof requested === "string" && requested ? requested : "Authorization, Content-Type, Idempotency-Key",
    );
    reply.header("Access-Control-Max-Age", "7200");
    return reply.code(200).send("");
  });
}
