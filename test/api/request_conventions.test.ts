import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { FastifyInstance } from "fastify";
import { fileData, isUploadedFile, type ParamValue } from "../../src/api/params.ts";
import {
  BadRequest,
  Conflict,
  Forbidden,
  NotFound,
  TooManyRequests,
  Unprocessable,
  ValidationFailed,
} from "../../src/errors.ts";
import { createTestServer, errorOf, multipartBody, request, type TestServer } from "../kit.ts";

/** Routes that expose the request plumbing so it can be tested from outside. */
function echoRoutes(app: FastifyInstance) {
  const describeValue = (value: ParamValue): unknown =>
    isUploadedFile(value)
      ? { file: value.filename, type: value.mimetype, size: value.size, text: fileData(value).toString("utf8") }
      : Array.isArray(value)
        ? value.map(describeValue)
        : value && typeof value === "object"
          ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, describeValue(v)]))
          : value;
  for (const method of ["GET", "POST", "PUT", "PATCH", "DELETE"] as const) {
    app.route({ method, url: "/test/echo/:id", handler: async (req) => describeValue(req.input) });
  }
  app.route({
    method: "POST",
    url: "/test/upload",
    config: { maxFileSize: 64 },
    handler: async (req) => describeValue(req.input),
  });
  const errors: Record<string, () => Error> = {
    notfound: () => new NotFound(),
    forbidden: () => new Forbidden(),
    validation: () => new ValidationFailed(["Text can't be blank", "Visibility is not included in the list"]),
    unprocessable: () => new Unprocessable("Cannot attach more than 4 files"),
    conflict: () => new Conflict(),
    ratelimit: () => new TooManyRequests(),
    badrequest: () => new BadRequest("param is missing or the value is empty or invalid: q"),
    crash: () => new TypeError("boom: secret internals"),
  };
  app.get("/test/error/:kind", async (req) => {
    throw errors[(req.params as { kind: string }).kind]();
  });
}

describe("request conventions", () => {
  let server: TestServer;
  before(async () => {
    server = await createTestServer({ routes: echoRoutes });
  });
  after(() => server.close());

  describe("bodies", () => {
    test("JSON bodies keep their types and nesting", async () => {
      const res = await request(server.app, "POST", "/test/echo/1", {
        json: { status: "hi", poll: { options: ["a", "b"], expires_in: 300, multiple: true }, media_ids: ["1", "2"] },
      });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), {
        status: "hi",
        poll: { options: ["a", "b"], expires_in: 300, multiple: true },
        media_ids: ["1", "2"],
        id: "1",
      });
    });

    test("form bodies use Rails nesting", async () => {
      const res = await request(server.app, "POST", "/test/echo/1", {
        form: [
          ["status", "hello world"],
          ["poll[options][]", "yes"],
          ["poll[options][]", "no"],
          ["poll[expires_in]", "300"],
          ["fields_attributes[0][name]", "site"],
          ["fields_attributes[0][value]", "https://example.com"],
          ["fields_attributes[1][name]", "pronouns"],
          ["media_attributes[][id]", "10"],
          ["media_attributes[][description]", "a cat"],
          ["media_attributes[][id]", "11"],
          ["media_attributes[][focus]", "0.5,0.5"],
          ["source[privacy]", "private"],
        ],
      });
      assert.deepEqual(res.json(), {
        status: "hello world",
        poll: { options: ["yes", "no"], expires_in: "300" },
        fields_attributes: { "0": { name: "site", value: "https://example.com" }, "1": { name: "pronouns" } },
        media_attributes: [
          { id: "10", description: "a cat" },
          { id: "11", focus: "0.5,0.5" },
        ],
        source: { privacy: "private" },
        id: "1",
      });
    });

    test("multipart bodies carry fields and files", async () => {
      const { body, contentType } = multipartBody([
        { name: "description", value: "a héron" },
        { name: "id[]", value: "1" },
        { name: "id[]", value: "2" },
        { name: "file", value: "abc", filename: "a.txt", type: "text/plain" },
      ]);
      const res = await request(server.app, "POST", "/test/upload", { body, headers: { "content-type": contentType } });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), {
        description: "a héron",
        id: ["1", "2"],
        file: { file: "a.txt", type: "text/plain", size: 3, text: "abc" },
      });
    });

    test("the query string is parsed with the same rules and wins over the body", async () => {
      const res = await request(
        server.app,
        "POST",
        "/test/echo/1?types[]=mention&types[]=follow&limit=5&status=from-query",
        { json: { status: "from-body", limit: 10 } },
      );
      assert.deepEqual(res.json(), { status: "from-query", limit: "5", types: ["mention", "follow"], id: "1" });
    });

    test("path parameters win over both", async () => {
      const res = await request(server.app, "PUT", "/test/echo/7?id=8", { json: { id: "9" } });
      assert.equal(res.json().id, "7");
    });

    test("DELETE bodies are read", async () => {
      const res = await request(server.app, "DELETE", "/test/echo/1", { form: { "account_ids[]": ["3", "4"] } });
      assert.deepEqual(res.json().account_ids, ["3", "4"]);
    });

    test("repeated keys without [] keep the last value", async () => {
      const res = await request(server.app, "GET", "/test/echo/1?a=1&a=2");
      assert.equal(res.json().a, "2");
    });

    test("an unknown content type carries no parameters", async () => {
      const res = await request(server.app, "POST", "/test/echo/1", {
        body: "status=hi",
        headers: { "content-type": "text/plain" },
      });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { id: "1" });
    });

    test("an empty JSON body is an empty object", async () => {
      const res = await request(server.app, "POST", "/test/echo/1", {
        body: "",
        headers: { "content-type": "application/json" },
      });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), { id: "1" });
    });
  });

  describe("bad input gets a JSON 4xx", () => {
    test("malformed JSON", async () => {
      const res = await request(server.app, "POST", "/test/echo/1", {
        body: '{"status": ',
        headers: { "content-type": "application/json" },
      });
      assert.deepEqual(errorOf(res), [400, "The request body is not valid JSON"]);
      assert.match(res.headers["content-type"] as string, /^application\/json/);
    });

    test("invalid UTF-8 in a JSON body", async () => {
      const body = Buffer.concat([Buffer.from('{"status":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
      assert.deepEqual(
        errorOf(
          await request(server.app, "POST", "/test/echo/1", { body, headers: { "content-type": "application/json" } }),
        ),
        [400, "Request body is not valid UTF-8"],
      );
    });

    test("invalid UTF-8 in a form body, raw or percent-encoded", async () => {
      const raw = Buffer.concat([Buffer.from("status="), Buffer.from([0xff, 0xfe])]);
      assert.equal(
        (
          await request(server.app, "POST", "/test/echo/1", {
            body: raw,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          })
        ).statusCode,
        400,
      );
      const encoded = await request(server.app, "POST", "/test/echo/1", {
        body: "status=%FF%FE",
        headers: { "content-type": "application/x-www-form-urlencoded" },
      });
      assert.deepEqual(errorOf(encoded), [400, "Invalid percent-encoding or UTF-8 in parameters"]);
    });

    test("invalid percent-encoding in the query string", async () => {
      assert.deepEqual(errorOf(await request(server.app, "GET", "/test/echo/1?q=%E0%A4%A")), [
        400,
        "Invalid percent-encoding or UTF-8 in parameters",
      ]);
    });

    test("NUL characters", async () => {
      assert.deepEqual(errorOf(await request(server.app, "POST", "/test/echo/1", { json: { status: "a\u0000b" } })), [
        400,
        "Parameters must not contain NUL characters",
      ]);
    });

    test("malformed multipart", async () => {
      const res = await request(server.app, "POST", "/test/upload", {
        body: "--nope\r\ngarbage",
        headers: { "content-type": "multipart/form-data; boundary=other" },
      });
      assert.equal(res.statusCode, 400);
      assert.match(res.json().error, /multipart/i);
      const noBoundary = await request(server.app, "POST", "/test/upload", {
        body: "x",
        headers: { "content-type": "multipart/form-data" },
      });
      assert.equal(noBoundary.statusCode, 400);
      assert.equal(typeof noBoundary.json().error, "string");
    });

    test("a file over the route's size limit", async () => {
      const { body, contentType } = multipartBody([
        { name: "file", value: Buffer.alloc(100, 1), filename: "big.bin", type: "application/octet-stream" },
      ]);
      assert.deepEqual(
        errorOf(await request(server.app, "POST", "/test/upload", { body, headers: { "content-type": contentType } })),
        [413, "File is larger than 64 bytes"],
      );
    });

    test("an oversized body", async () => {
      const res = await request(server.app, "POST", "/test/echo/1", { json: { status: "x".repeat(2 * 1024 * 1024) } });
      assert.deepEqual(errorOf(res), [413, "Request body is too large"]);
    });

    test("deeply nested parameters", async () => {
      const name = `a${"[b]".repeat(40)}`;
      assert.deepEqual(errorOf(await request(server.app, "GET", `/test/echo/1?${name}=1`)), [
        400,
        "Parameters are nested too deeply",
      ]);
    });

    test("unknown routes and wrong methods", async () => {
      assert.deepEqual(errorOf(await request(server.app, "GET", "/api/v1/nothing-here")), [404, "Not Found"]);
      assert.deepEqual(errorOf(await request(server.app, "DELETE", "/api/v2/instance")), [404, "Not Found"]);
      assert.deepEqual(errorOf(await request(server.app, "POST", "/api/v1/accounts/verify_credentials")), [
        404,
        "Not Found",
      ]);
    });
  });

  describe("error shapes", () => {
    const expectations: Array<[string, number, string]> = [
      ["notfound", 404, "Record not found"],
      ["forbidden", 403, "This action is not allowed"],
      ["validation", 422, "Validation failed: Text can't be blank, Visibility is not included in the list"],
      ["unprocessable", 422, "Cannot attach more than 4 files"],
      ["conflict", 409, "Conflict during update, please try again"],
      ["ratelimit", 429, "Too many requests"],
      ["badrequest", 400, "param is missing or the value is empty or invalid: q"],
    ];
    for (const [kind, status, text] of expectations) {
      test(`${status} ${text}`, async () => {
        const res = await request(server.app, "GET", `/test/error/${kind}`);
        assert.deepEqual(res.json(), { error: text });
        assert.equal(res.statusCode, status);
        assert.equal(res.headers["content-type"], "application/json; charset=utf-8");
      });
    }

    test("an unexpected failure is a bare 500 without internals", async () => {
      const res = await request(server.app, "GET", "/test/error/crash");
      assert.equal(res.statusCode, 500);
      assert.deepEqual(res.json(), { error: "Internal Server Error" });
      assert.doesNotMatch(res.body, /boom|secret|at /);
    });

    test("401 answers carry WWW-Authenticate", async () => {
      const res = await request(server.app, "GET", "/api/v1/accounts/verify_credentials");
      assert.match(res.headers["www-authenticate"] as string, /^Bearer realm="Doorkeeper", error="invalid_token"/);
    });
  });

  describe("CORS and common headers", () => {
    test("API responses allow any origin and expose Link and rate-limit headers", async () => {
      const res = await request(server.app, "GET", "/api/v2/instance", { headers: { origin: "https://elk.zone" } });
      assert.equal(res.headers["access-control-allow-origin"], "*");
      assert.match(res.headers["access-control-expose-headers"] as string, /Link/);
      assert.match(res.headers["access-control-expose-headers"] as string, /X-RateLimit-Remaining/);
      assert.equal(res.headers["access-control-allow-credentials"], undefined);
    });

    test("preflight requests are answered", async () => {
      const res = await request(server.app, "OPTIONS", "/api/v1/statuses", {
        headers: {
          origin: "https://elk.zone",
          "access-control-request-method": "POST",
          "access-control-request-headers": "authorization,content-type,idempotency-key",
        },
      });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers["access-control-allow-origin"], "*");
      assert.match(res.headers["access-control-allow-methods"] as string, /POST/);
      assert.equal(res.headers["access-control-allow-headers"], "authorization,content-type,idempotency-key");
    });

    test("web pages outside the API get no CORS headers", async () => {
      const res = await request(server.app, "GET", "/preview.png", { headers: { origin: "https://elk.zone" } });
      assert.equal(res.headers["access-control-allow-origin"], undefined);
    });

    test("every response has a request id; a sane incoming one is kept", async () => {
      assert.match((await request(server.app, "GET", "/health")).headers["x-request-id"] as string, /^[\w-]+$/);
      assert.equal(
        (await request(server.app, "GET", "/health", { headers: { "x-request-id": "abc-123" } })).headers[
          "x-request-id"
        ],
        "abc-123",
      );
    });
  });
});
