import { mkdir, readFile, rm, writeFile, rename } from "node:fs/promises";
import { dirname, join, normalize, sep } from "node:path";
import { randomBytes } from "node:crypto";

/**
 * Where uploaded files live. Files are addressed by keys such as
 * `accounts/avatars/<id>/original/<name>.png` and served under `/system/<key>`; an S3-compatible
 * implementation can replace the filesystem one without touching callers.
 */
export interface MediaStorage {
  put(key: string, data: Buffer): Promise<void>;
  get(key: string): Promise<Buffer | undefined>;
  delete(key: string): Promise<void>;
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

  async get(key: string): Promise<Buffer | undefined> {
    if (!isValidKey(key)) return undefined;
    try {
      return await readFile(this.#path(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "EISDIR")
        return undefined;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    if (!isValidKey(key)) return;
    await rm(this.#path(key), { force: true });
  }
}
