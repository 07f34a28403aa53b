import { createReadStream, type ReadStream } from "node:fs";
import { copyFile, mkdir, readdir, readFile, rm, stat, writeFile, rename } from "node:fs/promises";
import { dirname, join, normalize, sep } from "node:path";
import { randomBytes } from "node:crypto";

/**
 * Where uploaded files live. Files are addressed by keys such as
 * `accounts/avatars/<id>/original/<name>.png` and served under `/system/<key>`; an S3-compatible
 * implementation can replace the filesystem one without touching callers.
 */
export interface MediaStorage {
  put(key: string, data: Buffer): Promise<void>;
  /** Stores a local file under `key` (large video and audio never pass through memory whole). */
  putFile(key: string, path: string): Promise<void>;
  get(key: string): Promise<Buffer | undefined>;
  /** Copies the file at `key` to a local path (for ffmpeg); false when there is none. */
  copyToFile(key: string, path: string): Promise<boolean>;
  /** The file's size and a way to read any byte range of it, for serving; undefined when there is none. */
  open(key: string): Promise<StoredFile | undefined>;
  delete(key: string): Promise<void>;
  /** Deletes every file whose key starts with `prefix/`, except those in `keep`. */
  deleteUnder(prefix: string, keep: readonly string[]): Promise<void>;
}

export interface StoredFile {
  size: number;
  /** Bytes `start` to `end` inclusive (the whole file by default). */
  read(start?: number, end?: number): ReadStream;
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "ENOENT" || code === "EISDIR" || code === "ENOTDIR";
}

const KEY_PATTERN = /^[a-z0-9_]+(?:\/[A-Za-z0-9_.-]+)+$/;

export function isValidKey(key: string): boolean {
  return KEY_PATTERN.test(key) && !key.split("/").some((part) => part === "." || part === "..");
}

/** A random file name part for a new key. */
export function randomFileName(extension: string): string {
  return `${randomBytes(12).toString("hex")}.${extension}`;
}

export class FileSystemStorage implements MediaStorage {
  readonly #root: string;
  constructor(root: string) {
    this.#root = normalize(root);
  }

  #path(key: string): string {
    if (!isValidKey(key)) throw new Error(`invalid storage key ${key}`);
    const path = normalize(join(this.#root, key));
    if (!path.startsWith(this.#root + sep)) throw new Error(`storage key escapes the media folder: ${key}`);
    return path;
  }

  async put(key: string, data: Buffer): Promise<void> {
    const path = this.#path(key);
    await mkdir(dirname(path), { recursive: true });
    // Write then rename, so a reader never sees half a file.
    const temporary = `${path}.${randomBytes(4).toString("hex")}.tmp`;
    await writeFile(temporary, data);
    await rename(temporary, path);
  }

  async putFile(key: string, source: string): Promise<void> {
    const path = this.#path(key);
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.${randomBytes(4).toString("hex")}.tmp`;
    try {
      await copyFile(source, temporary);
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  async get(key: string): Promise<Buffer | undefined> {
    if (!isValidKey(key)) return undefined;
    try {
      return await readFile(this.#path(key));
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async copyToFile(key: string, target: string): Promise<boolean> {
    if (!isValidKey(key)) return false;
    try {
      await copyFile(this.#path(key), target);
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  async open(key: string): Promise<StoredFile | undefined> {
    if (!isValidKey(key)) return undefined;
    const path = this.#path(key);
    try {
      const info = await stat(path);
      if (!info.isFile()) return undefined;
      return { size: info.size, read: (start, end) => createReadStream(path, { start, end }) };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    if (!isValidKey(key)) return;
    await rm(this.#path(key), { force: true });
  }

  async deleteUnder(prefix: string, keep: readonly string[]): Promise<void> {
    if (!isValidKey(prefix)) return;
    const folder = this.#path(prefix);
    if (keep.length === 0) {
      await rm(folder, { recursive: true, force: true });
      return;
    }
    let entries;
    try {
      entries = await readdir(folder, { recursive: true, withFileTypes: true });
    } catch (error) {
      if (isMissing(error)) return;
      throw error;
    }
    const kept = new Set(keep.map((key) => this.#path(key)));
    for (const entry of entries) {
      const path = join(entry.parentPath, entry.name);
      if (entry.isFile() && !kept.has(path)) await rm(path, { force: true });
    }
  }
}
