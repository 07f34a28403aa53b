/**
 * A small ZIP writer (PKWARE APPNOTE 6.3: local headers, deflated or stored entries, the central
 * directory) for account archives: entries are added one at a time to a file on disk, so an
 * archive with hundreds of media files never sits in memory whole. No ZIP64: an archive over
 * 4 GiB or 65,535 entries is refused with a clear error.
 */
import { open, type FileHandle } from "node:fs/promises";
import { crc32, deflateRawSync } from "node:zlib";

const LIMIT = 0xffffffff;

interface CentralEntry {
  name: Buffer;
  crc: number;
  compressed: number;
  size: number;
  method: number;
  offset: number;
  time: number;
  date: number;
}

/** MS-DOS time and date of `when` (UTC, as archives carry no time zone). */
function dosTime(when: Date): { time: number; date: number } {
  const year = Math.max(1980, when.getUTCFullYear());
  return {
    time: (when.getUTCHours() << 11) | (when.getUTCMinutes() << 5) | Math.floor(when.getUTCSeconds() / 2),
    date: ((year - 1980) << 9) | ((when.getUTCMonth() + 1) << 5) | when.getUTCDate(),
  };
}

export class ZipWriter {
  readonly #file: FileHandle;
  readonly #entries: CentralEntry[] = [];
  #offset = 0;
  readonly #when = dosTime(new Date());

  private constructor(file: FileHandle) {
    this.#file = file;
  }

  static async create(path: string): Promise<ZipWriter> {
    return new ZipWriter(await open(path, "w"));
  }

  async #write(data: Buffer): Promise<void> {
    await this.#file.write(data);
    this.#offset += data.length;
    if (this.#offset > LIMIT) throw new Error("The archive is larger than a ZIP file without ZIP64 may be (4 GiB)");
  }

  /** Adds a file; text and JSON are deflated, media (already compressed) stored as they are. */
  async add(name: string, data: Buffer, options: { compress?: boolean } = {}): Promise<void> {
    if (this.#entries.length >= 0xffff) throw new Error("The archive has more entries than a ZIP file may hold");
    const compress = options.compress ?? true;
    const body = compress ? deflateRawSync(data) : data;
    const method = compress ? 8 : 0;
    const fileName = Buffer.from(name, "utf8");
    const crc = crc32(data);
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(20, 4); // version needed: 2.0
    header.writeUInt16LE(0x0800, 6); // UTF-8 names
    header.writeUInt16LE(method, 8);
    header.writeUInt16LE(this.#when.time, 10);
    header.writeUInt16LE(this.#when.date, 12);
    header.writeUInt32LE(crc, 14);
    header.writeUInt32LE(body.length, 18);
    header.writeUInt32LE(data.length, 22);
    header.writeUInt16LE(fileName.length, 26);
    header.writeUInt16LE(0, 28);
    const offset = this.#offset;
    await this.#write(Buffer.concat([header, fileName]));
    await this.#write(body);
    this.#entries.push({
      name: fileName,
      crc,
      compressed: body.length,
      size: data.length,
      method,
      offset,
      ...this.#when,
    });
  }

  /** Writes the central directory and closes the file. */
  async close(): Promise<void> {
    try {
      const start = this.#offset;
      for (const entry of this.#entries) {
        const header = Buffer.alloc(46);
        header.writeUInt32LE(0x02014b50, 0);
        header.writeUInt16LE(0x031e, 4); // made by: Unix, 3.0
        header.writeUInt16LE(20, 6);
        header.writeUInt16LE(0x0800, 8);
        header.writeUInt16LE(entry.method, 10);
        header.writeUInt16LE(entry.time, 12);
        header.writeUInt16LE(entry.date, 14);
        header.writeUInt32LE(entry.crc, 16);
        header.writeUInt32LE(entry.compressed, 20);
        header.writeUInt32LE(entry.size, 24);
        header.writeUInt16LE(entry.name.length, 28);
        header.writeUInt32LE((0o100644 << 16) >>> 0, 38); // a regular file, rw-r--r--
        header.writeUInt32LE(entry.offset, 42);
        await this.#write(Buffer.concat([header, entry.name]));
      }
      const end = Buffer.alloc(22);
      end.writeUInt32LE(0x06054b50, 0);
      end.writeUInt16LE(this.#entries.length, 8);
      end.writeUInt16LE(this.#entries.length, 10);
      end.writeUInt32LE(this.#offset - start, 12);
      end.writeUInt32LE(start, 16);
      await this.#write(end);
    } finally {
      await this.#file.close();
    }
  }

  /** Closes the file without finishing it (after a failure; the caller removes it). */
  async abort(): Promise<void> {
    await this.#file.close().catch(() => {});
  }
}
