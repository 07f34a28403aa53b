/**
 * Mastodon's CSV formats of what a user can take from one server to another (its Export,
 * Form::Import and BulkImportRow): which columns each kind has, how a file's first line is told
 * apart from data, and how fields become row data. A follows file starts with the header
 * `Account address,Show boosts,Notify on new posts,Languages`, a mutes file with
 * `Account address,Hide notifications`; blocks, domain blocks, bookmarks and lists have no
 * header (one address, domain or post URI a line; lists `title,address`). A file may leave the
 * header out where the type's first column is enough, as Mastodon accepts. Pure: no I/O.
 */
import { CsvSyntaxError, parseCsv, type CsvRecord, type CsvValue } from "./csv.ts";

/** The kinds of import, by Mastodon's names (its BulkImport types). */
export const IMPORT_TYPES = ["following", "blocking", "muting", "domain_blocking", "bookmarks", "lists"] as const;
export type ImportType = (typeof IMPORT_TYPES)[number];

export const IMPORT_TYPE_LABELS: Record<ImportType, string> = {
  following: "Following list",
  blocking: "Blocking list",
  muting: "Muting list",
  domain_blocking: "Domain blocking list",
  bookmarks: "Bookmarks",
  lists: "Lists",
};

/** Mastodon's limits (Form::Import): 20 MB a file, 20,000 rows. */
export const IMPORT_LIMITS = { fileBytes: 20 * 1024 * 1024, rows: 20_000 } as const;

/** What a row of an import holds, under Mastodon's keys (BulkImportRow#data). */
export interface ImportRowData {
  acct?: string;
  show_reblogs?: boolean;
  notify?: boolean;
  languages?: string[];
  hide_notifications?: boolean;
  domain?: string;
  uri?: string;
  list_name?: string;
}

type Column = keyof ImportRowData;

/** Each header Mastodon writes or reads, and the row data it fills. */
const COLUMN_OF_HEADER: Record<string, Column> = {
  "Account address": "acct",
  "Show boosts": "show_reblogs",
  "Notify on new posts": "notify",
  Languages: "languages",
  "Hide notifications": "hide_notifications",
  "#domain": "domain",
  "#uri": "uri",
  "List name": "list_name",
};

/** All the headers of a type, in the order its export writes them. */
export const HEADERS: Record<ImportType, readonly string[]> = {
  following: ["Account address", "Show boosts", "Notify on new posts", "Languages"],
  blocking: ["Account address"],
  muting: ["Account address", "Hide notifications"],
  domain_blocking: ["#domain"],
  bookmarks: ["#uri"],
  lists: ["List name", "Account address"],
};

/** The columns a file without a header line is read as (and which a header line must name). */
const DEFAULT_HEADERS: Record<ImportType, readonly string[]> = {
  following: ["Account address"],
  blocking: ["Account address"],
  muting: ["Account address"],
  domain_blocking: ["#domain"],
  bookmarks: ["#uri"],
  lists: ["List name", "Account address"],
};

/** A first line starting with one of these is a header line; anything else is data. */
const HEADER_STARTS = new Set(["Account address", "#domain", "#uri", "List name"]);

/** A file that cannot be imported as a whole; the message says why, for the user. */
export class ImportFileInvalid extends Error {}

/** A row read from a file: its data, and what is wrong with it when it cannot be imported at all. */
export interface ReadRow {
  line: number;
  data: ImportRowData;
  problem?: string;
}

// ActiveModel's boolean cast, as Mastodon reads "Show boosts" and the like: these are false, any other text true.
const FALSE_TEXTS = new Set(["0", "f", "false", "off"]);

function toFlag(text: string): boolean | undefined {
  const value = text.trim().toLowerCase();
  if (value === "") return undefined;
  return !FALSE_TEXTS.has(value);
}

// `user` or `user@domain` (a domain may carry a port); Mastodon strips a leading `@`.
const ACCT = /^[^\s@/:]+(@[a-z0-9.-]+(:\d{1,5})?)?$/i;

function fill(data: ImportRowData, column: Column, raw: string): void {
  switch (column) {
    case "acct":
      data.acct = raw.trim().replace(/^@/, "");
      return;
    case "show_reblogs":
    case "notify":
    case "hide_notifications": {
      const flag = toFlag(raw);
      if (flag !== undefined) data[column] = flag;
      return;
    }
    case "languages": {
      const languages = raw
        .split(",")
        .map((l) => l.trim())
        .filter((l) => l !== "");
      if (languages.length) data.languages = languages;
      return;
    }
    case "domain":
      data.domain = raw.trim().toLowerCase();
      return;
    case "uri":
    case "list_name":
      data[column] = raw.trim();
  }
}

/** What makes a row impossible to import whatever the servers say, if anything. */
function problemOf(type: ImportType, data: ImportRowData): string | undefined {
  if (type === "domain_blocking") return data.domain ? undefined : "No domain";
  if (type === "bookmarks") {
    const url = URL.parse(data.uri ?? "");
    return url && (url.protocol === "https:" || url.protocol === "http:") ? undefined : "Not the address of a post";
  }
  if (type === "lists" && !data.list_name) return "No list name";
  if (!data.acct) return "No account address";
  return ACCT.test(data.acct) ? undefined : "Not an account address (user@domain)";
}

function describeHeaders(headers: readonly string[]): string {
  return headers.map((h) => `“${h}”`).join(", ");
}

/**
 * Reads an import file's text for `type`: its rows, each with its data or its problem. Throws
 * ImportFileInvalid when the file as a whole cannot be imported: not CSV, no rows, a header line
 * of another kind of file, more rows than the limit.
 */
export function readImportFile(type: ImportType, text: string): ReadRow[] {
  let records: CsvRecord[];
  let more: boolean;
  try {
    ({ records, more } = parseCsv(text.replace(/^\uFEFF/, ""), IMPORT_LIMITS.rows + 1));
  } catch (error) {
    if (error instanceof CsvSyntaxError) throw new ImportFileInvalid(`The file is not valid CSV: ${error.message}.`);
    throw error;
  }
  if (records.length === 0) throw new ImportFileInvalid("The file is empty.");
  const first = records[0]!.fields.map((f) => f.trim());
  const hasHeader = HEADER_STARTS.has(first[0]!);
  const headers = hasHeader ? first : DEFAULT_HEADERS[type];
  const missing = DEFAULT_HEADERS[type].filter((h) => !headers.includes(h));
  if (missing.length)
    throw new ImportFileInvalid(
      `The file does not fit the selected type (${IMPORT_TYPE_LABELS[type]}): it needs the column ${describeHeaders(missing)}, and its first line names ${describeHeaders(first)}.`,
    );
  const rows = hasHeader ? records.slice(1) : records;
  if (rows.length > IMPORT_LIMITS.rows || more)
    throw new ImportFileInvalid(
      `The file has more than ${IMPORT_LIMITS.rows.toLocaleString("en")} rows; split it into smaller files.`,
    );
  if (rows.length === 0) throw new ImportFileInvalid("The file lists nothing to import.");
  // Only the type's own columns are read; others (a follows file imported as blocks) are ignored.
  const wanted = new Set(HEADERS[type]);
  const columns = headers.map((h) => (wanted.has(h) ? COLUMN_OF_HEADER[h] : undefined));
  return rows.map(({ line, fields }) => {
    const data: ImportRowData = {};
    columns.forEach((column, i) => {
      if (column && fields[i] !== undefined) fill(data, column, fields[i]!);
    });
    const problem = problemOf(type, data);
    return problem ? { line, data, problem } : { line, data };
  });
}

/** A row's data as a line of its type's CSV (the failures file, which can be imported again once fixed). */
export function rowValues(type: ImportType, data: ImportRowData): CsvValue[] {
  switch (type) {
    case "following":
      return [data.acct, data.show_reblogs ?? true, data.notify ?? false, data.languages?.join(", ")];
    case "blocking":
      return [data.acct];
    case "muting":
      return [data.acct, data.hide_notifications ?? true];
    case "domain_blocking":
      return [data.domain];
    case "bookmarks":
      return [data.uri];
    case "lists":
      return [data.list_name, data.acct];
  }
}

/** Whether a type's CSV starts with a header line (Mastodon writes one for follows and mutes only). */
export const hasHeaderLine = (type: ImportType) => type === "following" || type === "muting";

export function isImportType(value: string | undefined): value is ImportType {
  return (IMPORT_TYPES as readonly string[]).includes(value ?? "");
}
