/**
 * Media uploads (POST /api/v1/media and /api/v2/media) with real JPEG and PNG files: the stored
 * original and preview (served back through the app, never cropped), meta, blurhash, focus,
 * descriptions, EXIF orientation; GET/PUT/DELETE /api/v1/media/:id; refusals; and the clean-up of
 * uploads never attached.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import sharp from "sharp";
import type { LightMyRequestResponse } from "fastify";
import { removeUnattachedMedia } from "../../src/services/media/upload.ts";
import {
  appToken,
  createTestServer,
  describeAuth,
  errorOf,
  get,
  multipartBody,
  type MultipartPart,
  request,
  standardAccounts,
  tokenFor,
  uploadImage,
  type StandardAccounts,
  type TestServer,
} from "../kit.ts";
import type { MediaAttachment, Status } from "../types.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";

const NOT_VERIFIED = "File type of uploaded media could not be verified";

async function jpeg(width: number, height: number, orientation?: number): Promise<Buffer> {
  // A left-to-right gradient, so that a rotation is visible in the pixels too.
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      raw[i] = Math.round((255 * x) / Math.max(1, width - 1));
      raw[i + 1] = 80;
      raw[i + 2] = Math.round((255 * y) / Math.max(1, height - 1));
    }
  }
  const image = sharp(raw, { raw: { width, height, channels: 3 } }).jpeg({ quality: 90 });
  return (orientation ? image.withMetadata({ orientation }) : image).toBuffer();
}

async function png(width: number, height: number, alpha: boolean): Promise<Buffer> {
  return sharp({
    create: {
      width,
      height,
      channels: alpha ? 4 : 3,
      background: alpha ? { r: 10, g: 200, b: 30, alpha: 0.5 } : { r: 10, g: 200, b: 30 },
    },
  })
    .png()
    .toBuffer();
}

/** The path of a URL on this server (media URLs are absolute). */
function pathOf(url: string | null): string {
  assert.ok(url !== null && url.startsWith("https://rookery.test/system/"), String(url));
  return url.slice("https://rookery.test".length);
}

describe("media attachments", () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  const uploadRes = (token: string | undefined, parts: MultipartPart[], version = "v2") =>
    request(server.app, "POST", `/api/${version}/media`, { token, parts });
  const upload = async (
    file: Buffer,
    extra: Record<string, string> = {},
    version = "v2",
    token = a.alice.token,
  ): Promise<MediaAttachment> => {
    const res = await uploadRes(
      token,
      [
        { name: "file", value: file, filename: "upload.bin", type: "application/octet-stream" },
        ...Object.entries(extra).map(([name, value]) => ({ name, value })),
      ],
      version,
    );
    assert.equal(res.statusCode, 200, res.body);
    return res.json<MediaAttachment>();
  };
  const fetchFile = async (url: string | null): Promise<LightMyRequestResponse> => get(server.app, pathOf(url));
  const dimensions = async (data: Buffer) => {
    const meta = await sharp(data).metadata();
    return {
      width: meta.width,
      height: meta.height,
      format: meta.format,
      orientation: meta.orientation,
      exif: meta.exif,
    };
  };

  for (const version of ["v1", "v2"]) {
    test(`POST /api/${version}/media stores a JPEG and answers the processed attachment`, async () => {
      const media = await upload(await jpeg(320, 240), {}, version);
      assert.match(media.id, /^\d+$/);
      assert.equal(media.type, "image");
      assert.match(
        String(media.url),
        /^https:\/\/rookery\.test\/system\/media_attachments\/files\/\d+\/original\/[0-9a-f]+\.jpg$/,
      );
      assert.match(
        String(media.preview_url),
        /^https:\/\/rookery\.test\/system\/media_attachments\/files\/\d+\/small\/[0-9a-f]+\.(jpg|png)$/,
      );
      assert.equal(media.remote_url, null);
      assert.equal(media.description, null);
      assert.deepEqual(media.meta.original, { width: 320, height: 240, size: "320x240", aspect: 320 / 240 });
      assert.deepEqual(media.meta.small, { width: 320, height: 240, size: "320x240", aspect: 320 / 240 });
      assert.equal(typeof media.blurhash, "string");
      assert.match(String(media.blurhash), /^[0-9A-Za-z#$%*+,\-.:;=?@[\]^_{|}~]{6,}$/);
      const original = await fetchFile(media.url);
      assert.equal(original.statusCode, 200);
      assert.equal(original.headers["content-type"], "image/jpeg");
      assert.deepEqual(await dimensions(original.rawPayload).then((d) => [d.format, d.width, d.height]), [
        "jpeg",
        320,
        240,
      ]);
      const preview = await fetchFile(media.preview_url);
      assert.equal(preview.statusCode, 200);
      assert.match(String(preview.headers["content-type"]), /^image\/(jpeg|png)$/);
    });
  }

  test("the attachment matches the OpenAPI schema", { skip: openApiSkip }, async () => {
    assert.deepEqual(
      validateSchema("MediaAttachment", await upload(await jpeg(64, 48), { description: "schema", focus: "0.1,0.2" })),
      [],
    );
  });

  test("a large image gets a preview of at most 640×360 pixels with the same aspect ratio (never cropped)", async () => {
    for (const [width, height] of [
      [2000, 1000],
      [300, 1200],
      [1280, 720],
    ]) {
      const media = await upload(await jpeg(width, height));
      const { original, small } = media.meta;
      assert.ok(original && small, "original and small sizes");
      assert.deepEqual([original.width, original.height], [width, height]);
      assert.ok(small.width * small.height <= 640 * 360, JSON.stringify(small));
      assert.ok(small.width < width && small.height < height, "scaled down");
      assert.ok(Math.abs(small.aspect - width / height) < 0.01, `aspect ${small.aspect} vs ${width / height}`);
      assert.equal(small.size, `${small.width}x${small.height}`);
      const preview = await dimensions((await fetchFile(media.preview_url)).rawPayload);
      assert.deepEqual([preview.width, preview.height], [small.width, small.height]);
      assert.ok(Math.abs(preview.width! / preview.height! - width / height) < 0.01);
    }
  });

  test("a PNG keeps its format; transparency is kept in the preview", async () => {
    const media = await upload(await png(200, 100, true));
    assert.match(String(media.url), /\.png$/);
    const original = await fetchFile(media.url);
    assert.equal(original.headers["content-type"], "image/png");
    assert.equal((await dimensions(original.rawPayload)).format, "png");
    const preview = await fetchFile(media.preview_url);
    assert.equal(preview.headers["content-type"], "image/png");
    assert.equal((await sharp(preview.rawPayload).metadata()).hasAlpha, true);
    assert.deepEqual(media.meta.original, { width: 200, height: 100, size: "200x100", aspect: 2 });
    const opaque = await upload(await png(90, 60, false));
    assert.equal((await fetchFile(opaque.url)).headers["content-type"], "image/png");
    assert.match(String((await fetchFile(opaque.preview_url)).headers["content-type"]), /^image\//);
  });

  test("EXIF orientation is applied and the EXIF data is dropped", async () => {
    const media = await upload(await jpeg(200, 100, 6));
    assert.deepEqual([media.meta.original?.width, media.meta.original?.height], [100, 200]);
    assert.deepEqual([media.meta.small?.width, media.meta.small?.height], [100, 200]);
    const original = await dimensions((await fetchFile(media.url)).rawPayload);
    assert.deepEqual([original.width, original.height], [100, 200]);
    assert.ok(original.orientation === undefined || original.orientation === 1, `orientation ${original.orientation}`);
    assert.equal(original.exif, undefined);
    const preview = await dimensions((await fetchFile(media.preview_url)).rawPayload);
    assert.deepEqual([preview.width, preview.height], [100, 200]);
  });

  test("description and focus at upload", async () => {
    const media = await upload(await jpeg(40, 40), { description: "A gradient", focus: "0.5,-0.25" });
    assert.equal(media.description, "A gradient");
    assert.deepEqual(media.meta.focus, { x: 0.5, y: -0.25 });
    const edge = await upload(await jpeg(40, 40), { focus: "-1.0,1.0" });
    assert.deepEqual(edge.meta.focus, { x: -1, y: 1 });
    for (const focus of ["1.5,0", "0", "a,b", "0,0,0", "0,-2"]) {
      const res = await uploadRes(a.alice.token, [
        { name: "file", value: await jpeg(20, 20), filename: "a.jpg" },
        { name: "focus", value: focus },
      ]);
      assert.equal(res.statusCode, 422, focus);
    }
  });

  test("descriptions up to 1500 characters", async () => {
    const media = await upload(await jpeg(20, 20), { description: "d".repeat(1500) });
    assert.equal(media.description?.length, 1500);
    const [code, error] = errorOf(
      await uploadRes(a.alice.token, [
        { name: "file", value: await jpeg(20, 20), filename: "a.jpg" },
        { name: "description", value: "d".repeat(1501) },
      ]),
    );
    assert.equal(code, 422);
    assert.match(error, /^Validation failed: Description is too long/);
  });

  test("a file that is not an image is refused whatever its name and type say", async () => {
    const cases: Array<{ value: Buffer; filename: string; type: string }> = [
      { value: Buffer.from("just some text\n"), filename: "notes.txt", type: "text/plain" },
      { value: Buffer.from("not really a jpeg"), filename: "photo.jpg", type: "image/jpeg" },
      { value: Buffer.from("%PDF-1.4\n%âãÏÓ\n"), filename: "doc.pdf", type: "application/pdf" },
      { value: Buffer.alloc(0), filename: "empty.png", type: "image/png" },
      { value: (await jpeg(50, 50)).subarray(0, 20), filename: "truncated.jpg", type: "image/jpeg" },
    ];
    for (const file of cases) {
      assert.deepEqual(
        errorOf(await uploadRes(a.alice.token, [{ name: "file", ...file }])),
        [422, NOT_VERIFIED],
        file.filename,
      );
    }
    assert.deepEqual(errorOf(await uploadRes(a.alice.token, [{ name: "file", value: "a text field" }])), [
      422,
      NOT_VERIFIED,
    ]);
  });

  test("a missing file is 400", async () => {
    const [code, error] = errorOf(await uploadRes(a.alice.token, [{ name: "description", value: "no file" }]));
    assert.equal(code, 400);
    assert.match(error, /file/);
    assert.equal(
      (await request(server.app, "POST", "/api/v2/media", { token: a.alice.token, json: {} })).statusCode,
      400,
    );
  });

  test("uploads need a user token with write:media", async () => {
    const file = await jpeg(20, 20);
    assert.equal((await uploadRes(undefined, [{ name: "file", value: file, filename: "a.jpg" }])).statusCode, 401);
    assert.deepEqual(
      errorOf(await uploadRes(await appToken(server.ctx), [{ name: "file", value: file, filename: "a.jpg" }])),
      [422, "This method requires an authenticated user"],
    );
    assert.deepEqual(
      errorOf(
        await uploadRes(await tokenFor(server.ctx, a.bob, "read write:statuses"), [
          { name: "file", value: file, filename: "a.jpg" },
        ]),
      ),
      [403, "This action is outside the authorized scopes"],
    );
    assert.equal(
      (
        await uploadRes(await tokenFor(server.ctx, a.bob, "write:media"), [
          { name: "file", value: file, filename: "a.jpg" },
        ])
      ).statusCode,
      200,
    );
  });

  test("uploads from clients not on this machine carry the media rate limit (30 per 30 minutes)", async () => {
    const { body, contentType } = multipartBody([{ name: "file", value: await jpeg(20, 20), filename: "a.jpg" }]);
    const res = await server.app.inject({
      method: "POST",
      url: "/api/v2/media",
      payload: body,
      headers: { authorization: `Bearer ${a.carol.token}`, "content-type": contentType },
      remoteAddress: "198.51.100.4",
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers["x-ratelimit-limit"], "30");
    assert.equal(res.headers["x-ratelimit-remaining"], "29");
  });

  describe("GET, PUT and DELETE /api/v1/media/:id", () => {
    test("GET answers the unattached attachment; PUT changes description and focus", async () => {
      const media = await upload(await jpeg(60, 30));
      const res = await get(server.app, `/api/v1/media/${media.id}`, a.alice.token);
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), media);
      const put = await request(server.app, "PUT", `/api/v1/media/${media.id}`, {
        token: a.alice.token,
        form: { description: "Updated", focus: "-0.5,0.5" },
      });
      assert.equal(put.statusCode, 200, put.body);
      assert.equal(put.json<MediaAttachment>().description, "Updated");
      assert.deepEqual(put.json<MediaAttachment>().meta.focus, { x: -0.5, y: 0.5 });
      assert.deepEqual(put.json<MediaAttachment>().meta.original, media.meta.original);
      const again = await request(server.app, "PUT", `/api/v1/media/${media.id}`, {
        token: a.alice.token,
        json: { focus: "0.25,0.75" },
      });
      assert.equal(again.json<MediaAttachment>().description, "Updated", "an absent description is kept");
      assert.deepEqual(again.json<MediaAttachment>().meta.focus, { x: 0.25, y: 0.75 });
      assert.equal(
        (
          await request(server.app, "PUT", `/api/v1/media/${media.id}`, {
            token: a.alice.token,
            json: { description: "x".repeat(1501) },
          })
        ).statusCode,
        422,
      );
      assert.equal(
        (
          await request(server.app, "PUT", `/api/v1/media/${media.id}`, {
            token: a.alice.token,
            json: { focus: "3,3" },
          })
        ).statusCode,
        422,
      );
      assert.equal(
        (await get(server.app, `/api/v1/media/${media.id}`, a.alice.token)).json<MediaAttachment>().description,
        "Updated",
      );
    });

    test("once attached: GET and PUT are 404, DELETE is 422", async () => {
      const media = await upload(await jpeg(30, 30));
      const status = await request(server.app, "POST", "/api/v1/statuses", {
        token: a.alice.token,
        json: { media_ids: [media.id] },
      });
      assert.equal(status.statusCode, 200);
      assert.equal((await get(server.app, `/api/v1/media/${media.id}`, a.alice.token)).statusCode, 404);
      assert.equal(
        (
          await request(server.app, "PUT", `/api/v1/media/${media.id}`, {
            token: a.alice.token,
            json: { description: "late" },
          })
        ).statusCode,
        404,
      );
      assert.deepEqual(
        errorOf(await request(server.app, "DELETE", `/api/v1/media/${media.id}`, { token: a.alice.token })),
        [422, "Media attachment is currently used by a status"],
      );
      assert.equal((await fetchFile(media.url)).statusCode, 200);
    });

    test("DELETE removes the attachment and its files", async () => {
      const media = await upload(await jpeg(30, 30));
      const res = await request(server.app, "DELETE", `/api/v1/media/${media.id}`, { token: a.alice.token });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), {});
      assert.equal((await get(server.app, `/api/v1/media/${media.id}`, a.alice.token)).statusCode, 404);
      assert.equal((await fetchFile(media.url)).statusCode, 404);
      assert.equal((await fetchFile(media.preview_url)).statusCode, 404);
      assert.equal(
        (await request(server.app, "DELETE", `/api/v1/media/${media.id}`, { token: a.alice.token })).statusCode,
        404,
      );
      assert.equal(
        (
          await request(server.app, "POST", "/api/v1/statuses", {
            token: a.alice.token,
            json: { media_ids: [media.id] },
          })
        ).statusCode,
        422,
      );
    });

    test("another user's media is 404 for GET, PUT and DELETE", async () => {
      const media = await upload(await jpeg(30, 30));
      assert.equal((await get(server.app, `/api/v1/media/${media.id}`, a.bob.token)).statusCode, 404);
      assert.equal(
        (
          await request(server.app, "PUT", `/api/v1/media/${media.id}`, {
            token: a.bob.token,
            json: { description: "mine now" },
          })
        ).statusCode,
        404,
      );
      assert.equal(
        (await request(server.app, "DELETE", `/api/v1/media/${media.id}`, { token: a.bob.token })).statusCode,
        404,
      );
      assert.equal(
        (await get(server.app, `/api/v1/media/${media.id}`, a.alice.token)).json<MediaAttachment>().description,
        null,
      );
      assert.equal((await get(server.app, "/api/v1/media/123", a.alice.token)).statusCode, 404);
      assert.equal((await get(server.app, "/api/v1/media/abc", a.alice.token)).statusCode, 404);
    });
  });

  test("removeUnattachedMedia deletes old uploads never attached, and their files, and nothing else", async () => {
    const loose = await upload(await jpeg(30, 30));
    const attached = await upload(await jpeg(30, 30));
    const reserved = await upload(await jpeg(30, 30));
    const posted = await request(server.app, "POST", "/api/v1/statuses", {
      token: a.alice.token,
      json: { status: "keep", media_ids: [attached.id] },
    });
    assert.equal(posted.statusCode, 200);
    const scheduled = await request(server.app, "POST", "/api/v1/statuses", {
      token: a.alice.token,
      json: { status: "later", media_ids: [reserved.id], scheduled_at: new Date(Date.now() + 3600_000).toISOString() },
    });
    assert.equal(scheduled.statusCode, 200, scheduled.body);
    // Nothing is a day old yet.
    assert.equal(await removeUnattachedMedia(server.ctx), 0);
    assert.equal((await get(server.app, `/api/v1/media/${loose.id}`, a.alice.token)).statusCode, 200);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const removed = await removeUnattachedMedia(server.ctx, 0);
    assert.ok(removed >= 1);
    assert.equal((await get(server.app, `/api/v1/media/${loose.id}`, a.alice.token)).statusCode, 404);
    assert.equal((await fetchFile(loose.url)).statusCode, 404);
    assert.equal((await fetchFile(loose.preview_url)).statusCode, 404);
    assert.equal((await fetchFile(attached.url)).statusCode, 200);
    assert.equal((await fetchFile(reserved.url)).statusCode, 200);
    const status = (await get(server.app, `/api/v1/statuses/${posted.json<Status>().id}`)).json<Status>();
    assert.deepEqual(
      status.media_attachments.map((m) => m.id),
      [attached.id],
    );
    const remaining = await server.ctx.db.kysely
      .selectFrom("media_attachments")
      .select("id")
      .where("id", "in", [loose.id, attached.id, reserved.id])
      .execute();
    assert.deepEqual(remaining.map((r) => r.id).sort(), [attached.id, reserved.id].sort());
  });

  test("the media of a deleted status are freed, then cleaned up like any unattached upload", async () => {
    const media = await upload(await jpeg(30, 30));
    const status = (
      await request(server.app, "POST", "/api/v1/statuses", { token: a.alice.token, json: { media_ids: [media.id] } })
    ).json<Status>();
    await request(server.app, "DELETE", `/api/v1/statuses/${status.id}`, { token: a.alice.token });
    assert.equal((await get(server.app, `/api/v1/media/${media.id}`, a.alice.token)).statusCode, 200);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await removeUnattachedMedia(server.ctx, 0);
    assert.equal((await get(server.app, `/api/v1/media/${media.id}`, a.alice.token)).statusCode, 404);
    assert.equal((await fetchFile(media.url)).statusCode, 404);
  });
  describeAuth("POST /api/v2/media", () => server, {
    scope: "write:media",
    send: async (_, token) => uploadRes(token, [{ name: "file", value: await jpeg(16, 16), filename: "a.jpg" }]),
  });
  describeAuth("DELETE /api/v1/media/:id/thumbnail", () => server, {
    scope: "write:media",
    send: async (_, token, owner) => {
      const media = await uploadImage(server, owner);
      return request(server.app, "DELETE", `/api/v1/media/${media.id}/thumbnail`, { token });
    },
  });
  for (const method of ["GET", "PUT", "DELETE"] as const) {
    describeAuth(`${method} /api/v1/media/:id`, () => server, {
      scope: "write:media",
      send: async (_, token, owner) => {
        const media = await uploadImage(server, owner);
        const json = method === "PUT" ? { description: "described" } : undefined;
        return request(server.app, method, `/api/v1/media/${media.id}`, { token, json });
      },
    });
  }
});
