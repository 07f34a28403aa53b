import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CsvSyntaxError, csvLine, parseCsv } from "./csv.ts";
import { ImportFileInvalid, readImportFile } from "./formats.ts";

const fieldsOf = (text: string) => parseCsv(text).records.map((r) => r.fields);

describe("CSV", () => {
  test("fields, quotes, doubled quotes, commas and line ends inside quotes", () => {
    assert.deepEqual(fieldsOf('a,b\n"c, d","say ""hi"""\n"two\nlines",\n'), [
      ["a", "b"],
      ["c, d", 'say "hi"'],
      ["two\nlines", ""],
    ]);
  });

  test("CRLF and CR line ends; blank lines are skipped; records keep their first line", () => {
    const { records } = parseCsv("x\r\n\r\ny\rz\n,\n \nw");
    assert.deepEqual(
      records.map((r) => [r.line, r.fields[0]]),
      [
        [1, "x"],
        [3, "y"],
        [4, "z"],
        [7, "w"],
      ],
    );
  });

  test("stops after the records asked for and says more follow", () => {
    assert.deepEqual(parseCsv("a\nb\nc", 2), {
      records: [
        { line: 1, fields: ["a"] },
        { line: 2, fields: ["b"] },
      ],
      more: true,
    });
    assert.equal(parseCsv("a\nb", 2).more, false);
  });

  test("an unclosed quote, text after a closing quote and a stray quote are errors with their line", () => {
    assert.throws(() => parseCsv('a\n"b\nc'), new CsvSyntaxError(2, "a quoted field is never closed"));
    assert.throws(() => parseCsv('a\n"b"c'), new CsvSyntaxError(2, "text follows the closing quote of a field"));
    assert.throws(
      () => parseCsv('a\nb"c'),
      new CsvSyntaxError(2, "a quote inside a field that does not start with one"),
    );
  });

  test("writing quotes only what needs it, and reads back the same", () => {
    const line = csvLine(["alice@a.test", true, false, "en, de", null, 'x"y']);
    assert.equal(line, 'alice@a.test,true,false,"en, de",,"x""y"\n');
    assert.deepEqual(fieldsOf(line), [["alice@a.test", "true", "false", "en, de", "", 'x"y']]);
  });
});

describe("import files", () => {
  test("a follows file: header, Mastodon's boolean cast, languages, a leading @", () => {
    const rows = readImportFile(
      "following",
      'Account address,Show boosts,Notify on new posts,Languages\n@bob@b.test,false,true,"en, de"\ncarol,off,,\n',
    );
    assert.deepEqual(rows, [
      { line: 2, data: { acct: "bob@b.test", show_reblogs: false, notify: true, languages: ["en", "de"] } },
      { line: 3, data: { acct: "carol", show_reblogs: false } },
    ]);
  });

  test("files without a header line, a byte order mark, columns in another order", () => {
    assert.deepEqual(readImportFile("blocking", "\uFEFFbob@b.test\n"), [{ line: 1, data: { acct: "bob@b.test" } }]);
    assert.deepEqual(readImportFile("muting", "Account address,Hide notifications\nbob,no\n"), [
      { line: 2, data: { acct: "bob", hide_notifications: true } },
    ]);
    assert.deepEqual(readImportFile("following", "Account address,Languages,Show boosts\nbob,fr,0\n"), [
      { line: 2, data: { acct: "bob", languages: ["fr"], show_reblogs: false } },
    ]);
    assert.deepEqual(readImportFile("lists", "Friends,bob@b.test\n"), [
      { line: 1, data: { list_name: "Friends", acct: "bob@b.test" } },
    ]);
  });

  test("bad rows carry their problem; the file is still read", () => {
    assert.deepEqual(readImportFile("bookmarks", "https://b.test/users/bob/statuses/1\nnot a url\n"), [
      { line: 1, data: { uri: "https://b.test/users/bob/statuses/1" } },
      { line: 2, data: { uri: "not a url" }, problem: "Not the address of a post" },
    ]);
    assert.equal(readImportFile("blocking", "bob smith\n")[0]!.problem, "Not an account address (user@domain)");
  });

  test("files that cannot be imported at all", () => {
    assert.throws(() => readImportFile("blocking", "\n\n"), new ImportFileInvalid("The file is empty."));
    assert.throws(
      () => readImportFile("following", "Account address,Show boosts\n"),
      new ImportFileInvalid("The file lists nothing to import."),
    );
    assert.throws(
      () => readImportFile("domain_blocking", "Account address\nbob@b.test\n"),
      /needs the column “#domain”/,
    );
    assert.throws(() => readImportFile("blocking", "bob\n".repeat(20_001)), /more than 20,000 rows/);
    assert.equal(readImportFile("blocking", "bob\n".repeat(20_000)).length, 20_000);
  });
});
