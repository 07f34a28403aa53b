/**
 * CSV as Mastodon's exports write it and its imports read it (Ruby's CSV: comma-separated,
 * double quotes around fields that need them, a quote doubled inside). Reading is strict where
 * Ruby's is — a quote that is never closed, or one inside a field that does not start with one,
 * makes the file invalid — and lenient about line ends (LF, CRLF or CR) and blank lines, which
 * are skipped. Pure: no I/O.
 */

/** A file that is not CSV; `line` is the line (from 1) where reading stopped. */
export class CsvSyntaxError extends Error {
  readonly line: number;
  constructor(line: number, problem: string) {
    super(`line ${line}: ${problem}`);
    this.line = line;
  }
}

/** One record of a CSV file and the line it starts on. */
export interface CsvRecord {
  line: number;
  fields: string[];
}

export interface ParsedCsv {
  records: CsvRecord[];
  /** More records follow the `maxRecords` read. */
  more: boolean;
}

const QUOTE = '"';

function newlinesIn(text: string): number {
  let count = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) count++;
  return count;
}

/**
 * The records of `input`, at most `maxRecords` of them (a file past a row limit need not be read
 * to its end). Lines that hold nothing but spaces and commas are skipped as blank.
 */
export function parseCsv(input: string, maxRecords = Number.POSITIVE_INFINITY): ParsedCsv {
  const text = input.replace(/\r\n?/g, "\n");
  const records: CsvRecord[] = [];
  const n = text.length;
  let i = 0;
  let line = 1;
  while (i < n) {
    const start = line;
    const fields: string[] = [];
    for (;;) {
      if (text[i] === QUOTE) {
        let value = "";
        i++;
        for (;;) {
          const close = text.indexOf(QUOTE, i);
          if (close === -1) throw new CsvSyntaxError(start, "a quoted field is never closed");
          const chunk = text.slice(i, close);
          value += chunk;
          line += newlinesIn(chunk);
          if (text[close + 1] === QUOTE) {
            value += QUOTE;
            i = close + 2;
            continue;
          }
          i = close + 1;
          break;
        }
        if (i < n && text[i] !== "," && text[i] !== "\n")
          throw new CsvSyntaxError(line, "text follows the closing quote of a field");
        fields.push(value);
      } else {
        let end = i;
        while (end < n && text[end] !== "," && text[end] !== "\n") end++;
        const value = text.slice(i, end);
        if (value.includes(QUOTE))
          throw new CsvSyntaxError(line, "a quote inside a field that does not start with one");
        fields.push(value);
        i = end;
      }
      if (i < n && text[i] === ",") {
        i++;
        continue;
      }
      break;
    }
    if (i < n) {
      i++;
      line++;
    }
    if (fields.every((field) => field.trim() === "")) continue;
    if (records.length === maxRecords) return { records, more: true };
    records.push({ line: start, fields });
  }
  return { records, more: false };
}

/** A CSV field's text: true/false for booleans, nothing for null and undefined. */
export type CsvValue = string | boolean | null | undefined;

function field(value: CsvValue): string {
  if (value === null || value === undefined) return "";
  const text = String(value);
  return /[",\n\r]/.test(text) ? `${QUOTE}${text.replaceAll(QUOTE, QUOTE + QUOTE)}${QUOTE}` : text;
}

/** One CSV line, with its line end, quoting only the fields that need it (as Ruby's CSV does). */
export function csvLine(values: readonly CsvValue[]): string {
  return `${values.map(field).join(",")}\n`;
}
