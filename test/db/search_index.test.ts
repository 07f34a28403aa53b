/**
 * SQLite's full-text table of statuses holds only statuses with words in them (migration 0052):
 * posts from other servers (their text is empty) write no index row, a content warning is still
 * found, a status emptied by an edit leaves the index and one given words joins it, deletions
 * of either kind keep the index whole (FTS5's own integrity check), and search still answers.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { sql } from "kysely";
import { storeRemoteStatus } from "../../src/services/statuses/remote.ts";
import {
  createRemoteAccount,
  createTestServer,
  createUser,
  postStatus,
  remoteStatusData,
  TEST_ENGINE,
  type TestServer,
} from "../kit.ts";

describe(
  "the full-text index of statuses skips empty ones",
  { skip: TEST_ENGINE !== "sqlite" && "SQLite's FTS5 only" },
  () => {
    let server: TestServer;
    before(async () => {
      server = await createTestServer();
    });
    after(() => server.close());

    const indexed = async (statusId: string) =>
      (
        await sql<{ n: number }>`SELECT count(*) AS n FROM statuses_search_docsize WHERE id = ${statusId}`.execute(
          server.ctx.db.kysely,
        )
      ).rows[0]!.n > 0;
    const matches = async (word: string) =>
      (
        await sql<{ rowid: string }>`SELECT rowid FROM statuses_search WHERE statuses_search MATCH ${word}`.execute(
          server.ctx.db.kysely,
        )
      ).rows.map((row) => String(row.rowid));
    const setText = (statusId: string, text: string, spoiler = "") =>
      server.ctx.db.kysely
        .updateTable("statuses")
        .set({ text, spoiler_text: spoiler })
        .where("id", "=", statusId)
        .execute();
    const integrityCheck = () =>
      sql`INSERT INTO statuses_search (statuses_search, rank) VALUES ('integrity-check', 0)`.execute(
        server.ctx.db.kysely,
      );

    const remotePost = (n: number, spoilerText = "") =>
      createRemoteAccount(server.ctx, `far${n}`, "far.example").then((author) =>
        storeRemoteStatus(
          server.ctx,
          author,
          remoteStatusData(`https://far.example/users/far${n}/statuses/${n}`, {
            content: "<p>words only in the HTML</p>",
            spoilerText,
          }),
        ),
      );

    test("another server's post writes no index row; one with a content warning does", async () => {
      const plain = await remotePost(1);
      assert.equal(await indexed(plain.id), false);
      const warned = await remotePost(2, "spoilers ahead");
      assert.equal(await indexed(warned.id), true);
      assert.deepEqual(await matches("spoilers"), [warned.id]);
      await integrityCheck();
    });

    test("edits move a status in and out of the index; deletions of either kind keep it whole", async () => {
      const alice = await createUser(server.ctx, "alice");
      const local = await postStatus(server, alice, { status: "a pangolin" });
      assert.deepEqual(await matches("pangolin"), [local.id]);
      await setText(local.id, "");
      assert.equal(await indexed(local.id), false);
      assert.deepEqual(await matches("pangolin"), []);
      await setText(local.id, "an armadillo");
      assert.deepEqual(await matches("armadillo"), [local.id]);
      await setText(local.id, "a tapir", "beware");
      assert.deepEqual(await matches("armadillo"), []);
      assert.deepEqual(await matches("tapir"), [local.id]);
      assert.deepEqual(await matches("beware"), [local.id]);

      const plain = await remotePost(3);
      await setText(plain.id, "a quokka");
      assert.deepEqual(await matches("quokka"), [plain.id]);
      await integrityCheck();

      const empty = await remotePost(4);
      await server.ctx.db.kysely.deleteFrom("statuses").where("id", "in", [empty.id, local.id, plain.id]).execute();
      assert.deepEqual(await matches("tapir"), []);
      assert.deepEqual(await matches("quokka"), []);
      await integrityCheck();
    });
  },
);
