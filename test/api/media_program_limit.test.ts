/**
 * Many video uploads at once: ffprobe (during the request) and ffmpeg (in the conversion job) share
 * the process's program slots, here 2 slots and a queue of 4 waiting uploads. Never more than two
 * programs run; an upload that cannot wait is 503 with Retry-After and leaves nothing behind; the
 * waiting ones and the conversions finish normally. Programs are counted from start to exit by
 * `runningPrograms()` (src/media/ffmpeg.ts), apart from the slots.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { connect, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { resetPeakPrograms, runningPrograms } from "../../src/media/ffmpeg.ts";
import { ProgramSlots } from "../../src/media/program_slots.ts";
import {
  createTestServer,
  errorOf,
  eventually,
  get,
  multipartBody,
  request,
  standardAccounts,
  type StandardAccounts,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { noTranscoder, samples } from "../media_samples.ts";
import type { MediaAttachment } from "../types.ts";

const BUSY = "Too many media files are being processed right now; try again in a moment";

// This test process's own temporary folder, to see that refused uploads leave nothing there.
const scratch = mkdtempSync(join(tmpdir(), "rookery-media-limit-test-"));
process.env.TMPDIR = scratch;
async function scratchLeft(): Promise<string[]> {
  const left = () => readdirSync(scratch).filter((name) => /^rookery-(media|upload)-/.test(name));
  for (let i = 0; i < 50 && left().length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  return left();
}

describe("ffmpeg and ffprobe under the process's limit", { skip: noTranscoder }, () => {
  let server: TestServer;
  let a: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    a = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  /** Gives the server fresh slots: `limit` programs at once, `queue` uploads waiting. */
  function limitPrograms(limit: number, queue: number): ProgramSlots {
    const slots = new ProgramSlots({ limit, queue });
    server.ctx.config.transcoder = { ...server.ctx.config.transcoder!, slots };
    resetPeakPrograms();
    return slots;
  }
  const upload = (user: TestUser, video: Buffer, version = "v2") =>
    request(server.app, "POST", `/api/${version}/media`, {
      token: user.token,
      parts: [{ name: "file", value: video, filename: "clip.mp4", type: "video/mp4" }],
    });
  const mediaRows = async (user: TestUser) =>
    (
      await server.ctx.db.kysely
        .selectFrom("media_attachments")
        .select("id")
        .where("account_id", "=", user.account.id)
        .execute()
    ).map((r) => r.id);
  /** The attachments that have a folder of files. */
  const folders = (): string[] => {
    const root = join(server.ctx.config.mediaDir, "media_attachments", "files");
    return existsSync(root) ? readdirSync(root) : [];
  };
  const assertRefused = (res: LightMyRequestResponse, slots: ProgramSlots) => {
    assert.deepEqual(errorOf(res), [503, BUSY]);
    assert.equal(res.headers["retry-after"], String(slots.retryAfterSeconds));
  };
  /** Runs the conversions and checks that each accepted upload became a finished video. */
  const assertFinished = async (user: TestUser, ids: string[]) => {
    await server.ctx.jobs.drain();
    for (const id of ids) {
      const res = await get(server.app, `/api/v1/media/${id}`, user.token);
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(res.json<MediaAttachment>().url, id);
    }
  };

  test("with both slots busy and four uploads waiting, the next are 503 with Retry-After and store nothing; the waiting four finish", async () => {
    const slots = limitPrograms(2, 4);
    const video = await samples.mp4();
    const rowsBefore = await mediaRows(a.bob);
    const foldersBefore = folders();
    const held = [await slots.take(), await slots.take()];

    const answered: LightMyRequestResponse[] = [];
    const uploads = Array.from({ length: 12 }, () =>
      upload(a.bob, video).then((res) => {
        answered.push(res);
        return res;
      }),
    );
    await eventually(
      () => answered.length === 8 && slots.waiting === 4,
      "eight uploads answered and four waiting",
      10_000,
    );
    for (const res of answered) assertRefused(res, slots);
    // v1, which would wait for the conversion, is refused the same way.
    assertRefused(await upload(a.bob, video, "v1"), slots);
    assert.deepEqual(await mediaRows(a.bob), rowsBefore, "no row was stored");
    assert.deepEqual(folders(), foldersBefore, "no file was stored");

    for (const release of held) release();
    const accepted = (await Promise.all(uploads)).filter((res) => res.statusCode !== 503);
    assert.deepEqual(
      accepted.map((res) => res.statusCode),
      [202, 202, 202, 202],
    );
    await assertFinished(
      a.bob,
      accepted.map((res) => res.json<MediaAttachment>().id),
    );
    assert.ok(runningPrograms().peak <= 2, `${runningPrograms().peak} programs ran at once`);
    assert.deepEqual(await scratchLeft(), [], "no temporary file is left");
  });

  test("12 uploads at once while conversions run: never more than 2 programs; each is accepted and finishes, or is refused and leaves nothing", async () => {
    const slots = limitPrograms(2, 4);
    const video = await samples.mp4();
    const rowsBefore = await mediaRows(a.carol);
    const foldersBefore = folders();
    // A conversion is queued first, so the job's programs compete with the uploads' ffprobe.
    assert.equal((await upload(a.carol, video)).statusCode, 202);
    let uploading = true;
    const converting = (async () => {
      while (uploading) {
        await server.ctx.jobs.drain();
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const responses = await Promise.all(Array.from({ length: 12 }, () => upload(a.carol, video)));
    uploading = false;
    await converting;

    const accepted = responses.filter((res) => res.statusCode === 202);
    for (const res of responses) if (res.statusCode !== 202) assertRefused(res, slots);
    const acceptedIds = accepted.map((res) => res.json<MediaAttachment>().id);
    const rows = await mediaRows(a.carol);
    assert.equal(rows.length, rowsBefore.length + 1 + accepted.length, "a row for each accepted upload only");
    await assertFinished(
      a.carol,
      rows.filter((id) => !rowsBefore.includes(id)),
    );
    const newFolders = folders().filter((id) => !foldersBefore.includes(id));
    assert.ok(
      newFolders.every((id) => rows.includes(id)),
      "files only for accepted uploads",
    );
    assert.equal(newFolders.length, 1 + acceptedIds.length);
    assert.ok(runningPrograms().peak <= 2, `${runningPrograms().peak} programs ran at once`);
    assert.deepEqual([slots.running, slots.waiting], [0, 0]);
    assert.deepEqual(await scratchLeft(), []);
  });

  test("an upload whose client hangs up while it waits for a slot leaves the queue and stores nothing", async () => {
    const slots = limitPrograms(2, 4);
    const held = [await slots.take(), await slots.take()];
    const rowsBefore = await mediaRows(a.alice);
    await server.app.listen({ port: 0, host: "127.0.0.1" }).catch(() => {});
    const port = (server.app.server.address() as AddressInfo).port;
    const { body, contentType } = multipartBody([
      { name: "file", value: await samples.mp4(), filename: "clip.mp4", type: "video/mp4" },
    ]);
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => {});
    socket.write(
      `POST /api/v2/media HTTP/1.1\r\nHost: rookery.test\r\nAuthorization: Bearer ${a.alice.token}\r\n` +
        `Content-Type: ${contentType}\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    socket.write(body);
    await eventually(() => slots.waiting === 1, "the upload waits for a slot", 10_000);
    socket.resetAndDestroy();
    await eventually(() => slots.waiting === 0, "the upload left the queue", 10_000);
    for (const release of held) release();
    assert.equal(slots.running, 0);
    assert.deepEqual(await mediaRows(a.alice), rowsBefore);
    assert.deepEqual(await scratchLeft(), []);
  });
});
