import { readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Folders under the system's temporary directory, by what made them. */
export const TEMPORARY = {
  /** Upload parts a request spooled to disk (removed when its response is done). */
  uploads: "rookery-upload-",
  /** A media conversion's working folder (removed when the job ends). */
  conversions: "rookery-media-",
} as const;

/**
 * Removes folders named `<prefix>…` older than `olderThanMs`: what a process that died mid-request
 * or mid-conversion left behind. Answers how many went.
 */
export async function removeStaleFolders(prefix: string, olderThanMs: number, now = Date.now()): Promise<number> {
  const root = tmpdir();
  let removed = 0;
  for (const name of await readdir(root).catch(() => [] as string[])) {
    if (!name.startsWith(prefix)) continue;
    const path = join(root, name);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isDirectory() || now - info.mtimeMs < olderThanMs) continue;
    await rm(path, { recursive: true, force: true });
    removed++;
  }
  return removed;
}
