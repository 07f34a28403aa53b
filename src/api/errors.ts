import type { FastifyError, FastifyInstance } from "fastify";
import { NoResultError } from "kysely";
import { ClientGone } from "../db/abort.ts";
import { ApiError } from "../errors.ts";
import { isForeignKeyViolation, isUniqueViolation } from "../db/errors.ts";

const FASTIFY_CLIENT_ERRORS: Record<string, [number, string]> = {
  FST_ERR_CTP_BODY_TOO_LARGE: [413, "Request body is too large"],
  FST_ERR_CTP_INVALID_MEDIA_TYPE: [415, "Unsupported content type"],
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: [400, "Request body size did not match Content-Length"],
  FST_ERR_CTP_EMPTY_JSON_BODY: [400, "The request body is not valid JSON"],
  FST_ERR_BAD_URL: [400, "Malformed URL"],
  FST_ERR_ASYNC_CONSTRAINT: [400, "Bad Request"],
  FST_INVALID_MULTIPART_CONTENT_TYPE: [400, "Malformed multipart body"],
  FST_REQ_FILE_TOO_LARGE: [413, "Request body is too large"],
  FST_PARTS_LIMIT: [413, "Too many parts in the multipart body"],
  FST_FILES_LIMIT: [413, "Too many files in the multipart body"],
  FST_FIELDS_LIMIT: [413, "Too many fields in the multipart body"],
  FST_PROTO_VIOLATION: [400, "Malformed multipart body"],
};

/**
 * The one place errors become responses: every error is JSON `{"error": "…"}` with Mastodon's
 * status and text. Unknown failures are logged and answered with a bare 500, never a stack trace.
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, req, reply) => {
    // Nobody is left to read an answer: no error log, no stack; the socket is already gone.
    if (error instanceof ClientGone) {
      req.log.debug("client closed the connection; request stopped");
      return reply.code(499).send({ error: "Client closed the connection" });
    }
    if (error instanceof ApiError) {
      if (error.headers) reply.headers(error.headers);
      return reply.code(error.status).send({ error: error.message, ...error.extra });
    }
    // A row that vanished or appeared under a concurrent request: Mastodon's answers to these races.
    if (isForeignKeyViolation(error) || error instanceof NoResultError)
      return reply.code(404).send({ error: "Record not found" });
    if (isUniqueViolation(error)) return reply.code(422).send({ error: "Duplicate record" });
    const known = error.code ? FASTIFY_CLIENT_ERRORS[error.code] : undefined;
    if (known) return reply.code(known[0]).send({ error: known[1] });
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) return reply.code(status).send({ error: error.message || "Bad Request" });
    req.log.error({ err: error }, "request failed");
    return reply.code(500).send({ error: "Internal Server Error" });
  });

  // Unmatched paths: src/web/not_found.ts (JSON 404 for clients, an HTML page for browsers).
}
