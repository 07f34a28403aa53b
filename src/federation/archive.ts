/**
 * The archive of a local account, as Mastodon's BackupService makes it: a ZIP holding
 * `actor.json` (the actor as other servers see it), `outbox.json` (every post of the account —
 * all visibilities, its own archive — as the Create or Announce that published it, oldest first),
 * `likes.json` and `bookmarks.json` (collections of status ids), the media of its posts under
 * `media_attachments/files/…` (their storage paths) and its avatar and header. Written to a
 * temporary file entry by entry, then stored under `archives/<random>/`.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Ctx } from "../context.ts";
import { mediaOrder } from "../db/columns.ts";
import { serializeStatuses } from "../entities/status.ts";
import { findAccountsByIds } from "../services/accounts/lookup.ts";
import {
  archiveFailed,
  archiveFinished,
  mediaFilesOf,
  pendingArchive,
  statusUrisKeptBy,
} from "../services/archives/archives.ts";
import { ZipWriter } from "../services/archives/zip.ts";
import { statusLinksOf } from "../services/statuses/audience.ts";
import { accountStatuses } from "../services/timelines/account.ts";
import { localActor } from "./actors.ts";
import { announceOf, createOf, noteOf } from "./notes.ts";
import { fedContext } from "./outbox/send.ts";

const PAGE = 40;
const AS_CONTEXT = "https://www.w3.org/ns/activitystreams";
const ALL = { onlyMedia: false, excludeReplies: false, excludeReblogs: false, pinned: false };

function orderedCollection(id: string, items: unknown[]) {
  return { "@context": AS_CONTEXT, id, type: "OrderedCollection", totalItems: items.length, orderedItems: items };
}

const json = (value: unknown) => Buffer.from(JSON.stringify(value, null, 2), "utf8");

/** Builds the archive `archiveId` (a pending one); a failure is recorded on it, not thrown again. */
export async function buildArchive(ctx: Ctx, archiveId: string): Promise<void> {
  const archive = await pendingArchive(ctx, archiveId);
  if (!archive) return;
  const [account] = await findAccountsByIds(ctx, [archive.account_id]);
  if (!account || account.domain !== null) return archiveFailed(ctx, archiveId, "The account is gone");
  const dir = await mkdtemp(join(tmpdir(), "rookery-archive-"));
  const path = join(dir, "archive.zip");
  const zip = await ZipWriter.create(path);
  try {
    const actor = await (await localActor(ctx, fedContext(ctx), account)).toJsonLd({ format: "compact" });
    await zip.add("actor.json", json(actor));
    for (const [kind, key] of [
      ["avatar", account.avatar_file],
      ["header", account.header_file],
    ] as const) {
      const data = key ? await ctx.media.get(key) : undefined;
      if (key && data) await zip.add(`${kind}${key.slice(key.lastIndexOf("."))}`, data, { compress: false });
    }

    const activities: unknown[] = [];
    let maxId: string | undefined;
    for (;;) {
      // The owner's own view: every post of every visibility.
      const rows = await accountStatuses(ctx, account, account.id, ALL, { limit: PAGE, maxId });
      if (rows.length === 0) break;
      const links = await statusLinksOf(
        ctx,
        rows.map((r) => r.id),
      );
      const entities = new Map(
        (
          await serializeStatuses(
            ctx,
            links.filter((l) => !l.reblogOf).map((l) => l.status),
          )
        ).map((e) => [e.id, e]),
      );
      for (const link of links) {
        const activity = link.reblogOf ? announceOf(link) : undefined;
        const entity = entities.get(link.status.id);
        const item = activity ?? (entity ? createOf(noteOf(link, entity), link) : undefined);
        if (item) activities.push(await item.toJsonLd({ format: "compact" }));
      }
      for (const file of await mediaFilesOf(
        ctx,
        rows.flatMap((r) => mediaOrder(r)),
      )) {
        const data = await ctx.media.get(file);
        if (data) await zip.add(`media_attachments/files/${file}`, data, { compress: false });
      }
      if (rows.length < PAGE) break;
      maxId = rows[rows.length - 1]!.id;
    }
    await zip.add("outbox.json", json(orderedCollection("outbox.json", activities.reverse())));
    for (const [table, name] of [
      ["favourites", "likes.json"],
      ["bookmarks", "bookmarks.json"],
    ] as const)
      await zip.add(name, json(orderedCollection(name, await statusUrisKeptBy(ctx, account.id, table))));
    await zip.close();
    const key = `archives/${randomBytes(16).toString("hex")}/archive-${account.username}.zip`;
    await ctx.media.putFile(key, path);
    await archiveFinished(ctx, archiveId, key, (await stat(path)).size);
  } catch (error) {
    await zip.abort();
    ctx.log.warn({ err: error, archiveId }, "could not build an account archive");
    await archiveFailed(ctx, archiveId, error instanceof Error ? error.message : String(error));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
