import multipart from "@fastify/multipart";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { BadRequest, PayloadTooLarge } from "../errors.ts";
import { TEMPORARY } from "../media/temporary.ts";
import {
  decodeFormPairs,
  mergeParams,
  nestPairs,
  parseFormEncoded,
  type ParamObject,
  type ParamValue,
} from "./params.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** Query, body and path parameters merged the Rails way (query wins over body, path over both). */
    input: ParamObject;
  }
  interface FastifyContextConfig {
    /** Largest file a multipart body of this route may carry, in bytes (default 1 MiB). */
    maxFileSize?: number;
    /** File parts go to temporary files instead of memory (large uploads: video and audio). */
    spoolFiles?: boolean;
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function decodeUtf8(body: Buffer): string {
  try {
    return utf8.decode(body);
  } catch {
    throw new BadRequest("Request body is not valid UTF-8");
  }
}

/** NUL characters cannot be stored in PostgreSQL text; reject them instead of failing later. */
function rejectNulCharacters(value: unknown, depth = 0): void {
  if (depth > 32) throw new BadRequest("Parameters are nested too deeply");
  if (typeof value === "string") {
    if (value.includes("\u0000")) throw new BadRequest("Parameters must not contain NUL characters");
  } else if (Array.isArray(value)) {
    for (const item of value) rejectNulCharacters(item, depth + 1);
  } else if (value && typeof value === "object" && (value as { kind?: unknown }).kind !== "file") {
    for (const [key, item] of Object.entries(value)) {
      rejectNulCharacters(key, depth + 1);
      rejectNulCharacters(item, depth + 1);
    }
  }
}

/** A temporary folder for this request's spooled files, removed once the response is done (or the client gone). */
async function spoolFolder(req: FastifyRequest, reply: FastifyReply): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), TEMPORARY.uploads));
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    void rm(folder, { recursive: true, force: true }).catch((error: unknown) =>
      req.log.warn({ err: error, folder }, "could not remove an upload's temporary folder"),
    );
  };
  reply.raw.once("close", remove);
  reply.raw.once("finish", remove);
  return folder;
}

async function readMultipart(req: FastifyRequest, reply: FastifyReply): Promise<ParamObject> {
  const pairs: Array<[string, ParamValue]> = [];
  const { maxFileSize = 1024 * 1024, spoolFiles = false } = req.routeOptions.config;
  let folder: string | undefined;
  try {
    for await (const part of req.parts({ limits: { fileSize: maxFileSize } })) {
      if (part.type === "file") {
        const base = { kind: "file" as const, filename: part.filename, mimetype: part.mimetype };
        if (spoolFiles) {
          folder ??= await spoolFolder(req, reply);
          const path = join(folder, String(pairs.length));
          await pipeline(part.file, createWriteStream(path));
          if (part.file.truncated) throw new PayloadTooLarge(`File is larger than ${maxFileSize} bytes`);
          if (part.filename === "") continue;
          pairs.push([part.fieldname, { ...base, size: part.file.bytesRead, path }]);
          continue;
        }
        const data = await part.toBuffer();
        if (part.file.truncated) throw new PayloadTooLarge(`File is larger than ${maxFileSize} bytes`);
        // A browser sends `filename=""` for a file input left empty; Rack drops such parts, so do we.
        if (part.filename === "") continue;
        pairs.push([part.fieldname, { ...base, size: data.length, data }]);
      } else {
        pairs.push([part.fieldname, typeof part.value === "string" ? part.value : String(part.value ?? "")]);
      }
    }
  } catch (error) {
    if (error instanceof BadRequest || error instanceof PayloadTooLarge) throw error;
    const code = (error as { code?: string }).code;
    if (code === "FST_REQ_FILE_TOO_LARGE") throw new PayloadTooLarge(`File is larger than ${maxFileSize} bytes`);
    throw new BadRequest(`Malformed multipart body: ${(error as Error).message}`);
  }
  return nestPairs(pairs);
}

/** An integer literal: no fraction, no exponent. */
const INTEGER_LITERAL = /^-?\d+$/;

/**
 * Keeps integers beyond 2^53 exact: clients send IDs such as `in_reply_to_id` as bare JSON numbers,
 * and `117668027173577827` would otherwise become `117668027173577820`. Such integers become strings
 * with every digit (Rails reads them as exact integers and IDs as strings); other numbers stay numbers.
 */
export function parseJsonKeepingBigIntegers(text: string): unknown {
  // Every unsafe integer has at least 16 digits; without such a run the plain parse is exact (and faster).
  if (!/\d{16}/.test(text)) return JSON.parse(text);
  return JSON.parse(text, (_key, value: unknown, context?: { source?: string }) => {
    if (typeof value !== "number" || Number.isSafeInteger(value)) return value;
    const source = context?.source;
    return source !== undefined && INTEGER_LITERAL.test(source) ? source : value;
  });
}

/**
 * Accepts JSON, form-encoded and multipart bodies on every route (clients use all three) and
 * builds `req.input`. Malformed bodies, bad encodings and invalid UTF-8 become 400s.
 */
export async function registerBodyParsing(app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers();
  await app.register(multipart, {
    limits: { fieldSize: 1024 * 1024, fields: 1000, parts: 1000, files: 10, headerPairs: 200 },
  });

  app.addContentTypeParser(
    /^application\/([\w.+-]+\+)?json\s*(;.*)?$/i,
    { parseAs: "buffer" },
    (_req, body: Buffer, done) => {
      try {
        const text = decodeUtf8(body).trim();
        done(null, text === "" ? {} : parseJsonKeepingBigIntegers(text));
      } catch (error) {
        done(error instanceof BadRequest ? error : new BadRequest("The request body is not valid JSON"), undefined);
      }
    },
  );

  app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "buffer" }, (_req, body: Buffer, done) => {
    try {
      done(null, parseFormEncoded(decodeUtf8(body)));
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  // Other content types carry no parameters (Rails ignores bodies it cannot parse); the body is still size-limited.
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_req, _body, done) => done(null, undefined));

  app.decorateRequest("input", null as unknown as ParamObject);
  app.addHook("preValidation", async (req, reply) => {
    const queryIndex = req.url.indexOf("?");
    const query = queryIndex === -1 ? Object.create(null) : nestPairs(decodeFormPairs(req.url.slice(queryIndex + 1)));
    // A raw body (an inbox POST, kept as bytes for its signature) is no parameters: walking it
    // would make each byte a parameter.
    const body = req.isMultipart() ? await readMultipart(req, reply) : Buffer.isBuffer(req.body) ? undefined : req.body;
    const input = mergeParams(body, query, req.params as Record<string, string> | undefined);
    rejectNulCharacters(input);
    req.input = input;
  });
}
