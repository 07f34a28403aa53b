/**
 * Parameter parsing and coercion, the way Rails nests names and ActiveModel casts values. Pure
 * functions, tested beside the module; the HTTP plumbing around them is in
 * test/api/request_conventions.test.ts.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { BadRequest, ValidationFailed } from "../errors.ts";
import {
  decodeFormPairs,
  mergeParams,
  parseFormEncoded,
  requireString,
  toBoolean,
  toChoice,
  toId,
  toInteger,
  toLimit,
  toStringArray,
  type ParamValue,
} from "./params.ts";

/** Parsed parameters as plain JSON (they are null-prototype objects that remember their key order). */
const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

describe("toBoolean (ActiveModel's cast)", () => {
  const cases: Array<[string, boolean | undefined]> = [
    ["true", true],
    ["1", true],
    ["on", true],
    ["yes", true],
    ["False", true],
    ["anything", true],
    ["false", false],
    ["0", false],
    ["f", false],
    ["F", false],
    ["FALSE", false],
    ["off", false],
    ["OFF", false],
    ["", undefined],
  ];
  for (const [text, expected] of cases) {
    test(`"${text}" → ${expected}`, () => {
      assert.equal(toBoolean(text), expected);
    });
  }

  test("absent → undefined (not given)", () => {
    assert.equal(toBoolean(undefined), undefined);
    assert.equal(toBoolean(null), undefined);
  });

  test("JSON values: booleans as they are, numbers by zero, the last of an array", () => {
    assert.equal(toBoolean(true), true);
    assert.equal(toBoolean(false), false);
    assert.equal(toBoolean(0), false);
    assert.equal(toBoolean(2), true);
    assert.equal(toBoolean(["0", "1"]), true);
    assert.equal(toBoolean(["1", "0"]), false);
  });
});

describe("toInteger (Ruby's to_i) and toLimit", () => {
  test("the leading integer, or 0", () => {
    const cases: Array<[ParamValue, number]> = [
      ["42", 42],
      [" 7 days", 7],
      ["-3", -3],
      ["+5", 5],
      ["abc", 0],
      ["1.9", 1],
      [12.7, 12],
      [{}, 0],
    ];
    for (const [value, expected] of cases) assert.equal(toInteger(value), expected, JSON.stringify(value));
  });

  test("absent or empty → undefined", () => {
    assert.equal(toInteger(undefined), undefined);
    assert.equal(toInteger(""), undefined);
  });

  test("a limit falls back when absent, is made positive and capped", () => {
    assert.equal(toLimit(undefined, 20, 40), 20);
    assert.equal(toLimit("5", 20, 40), 5);
    assert.equal(toLimit("-5", 20, 40), 5);
    assert.equal(toLimit("500", 20, 40), 40);
    assert.equal(toLimit("junk", 20, 40), 0);
  });
});

describe("form bodies and query strings", () => {
  test("pairs are percent-decoded, + is a space, a name without = has an empty value", () => {
    assert.deepEqual(decodeFormPairs("a=1&b=two+words&c&d=%C3%A9"), [
      ["a", "1"],
      ["b", "two words"],
      ["c", ""],
      ["d", "é"],
    ]);
    assert.deepEqual(decodeFormPairs(""), []);
  });

  test("bad percent-encoding is a 400", () => {
    assert.throws(() => decodeFormPairs("q=%E0%A4%A"), BadRequest);
    assert.throws(() => decodeFormPairs("q=%FF"), BadRequest);
  });

  test("Rails nesting: arrays, hashes, and arrays of hashes", () => {
    const params = parseFormEncoded(
      "media_ids[]=1&media_ids[]=2&poll[options][]=a&poll[options][]=b&poll[expires_in]=600" +
        "&media_attributes[][id]=1&media_attributes[][description]=one&media_attributes[][id]=2",
    );
    assert.deepEqual(plain(params.media_ids), ["1", "2"]);
    assert.deepEqual(plain(params.poll), { options: ["a", "b"], expires_in: "600" });
    assert.deepEqual(plain(params.media_attributes), [{ id: "1", description: "one" }, { id: "2" }]);
  });

  test("the query string wins over the body, path parameters over both", () => {
    const merged = mergeParams({ id: "body", status: "hello" }, parseFormEncoded("id=query&limit=5"), { id: "path" });
    assert.deepEqual(plain(merged), { id: "path", status: "hello", limit: "5" });
  });
});

describe("typed parameters", () => {
  test("string arrays accept a bare scalar and hashes of values", () => {
    assert.deepEqual(toStringArray(["1", 2]), ["1", "2"]);
    assert.deepEqual(toStringArray("1"), ["1"]);
    assert.deepEqual(toStringArray({ 0: "a", 1: "b" }), ["a", "b"]);
    assert.deepEqual(toStringArray(undefined), []);
    assert.deepEqual(toStringArray(""), []);
  });

  test("IDs must look like IDs", () => {
    assert.equal(toId(" 123 "), "123");
    assert.equal(toId(123), "123");
    assert.equal(toId("abc"), undefined);
    assert.equal(toId("1.5"), undefined);
    assert.equal(toId("9223372036854775808"), undefined, "beyond a signed 64-bit column");
    assert.equal(toId(undefined), undefined);
  });

  test("a choice outside the list is 422 with Rails' message", () => {
    assert.equal(toChoice("public", ["public", "private"], "Visibility"), "public");
    assert.equal(toChoice("", ["public", "private"], "Visibility"), undefined);
    assert.throws(
      () => toChoice("everyone", ["public", "private"], "Visibility"),
      (error: unknown) => {
        assert.ok(error instanceof ValidationFailed);
        assert.equal(error.message, "Validation failed: Visibility is not included in the list");
        return true;
      },
    );
  });

  test("a required string must be present and not blank", () => {
    assert.equal(requireString({ name: "x" }, "name"), "x");
    assert.throws(() => requireString({ name: "  " }, "name"));
    assert.throws(() => requireString({}, "name"));
  });
});
