/** The admin lists' paging links: which of Newer, Older and "Back to the newest" a page shows. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { pageLinks } from "./paging.ts";

const PATH = "/admin/things";
/** The links' texts and targets, decoded. */
const links = (keep: Record<string, string | undefined>, page: Parameters<typeof pageLinks>[2], ids: string[]) =>
  [...pageLinks(PATH, keep, page, ids).value.matchAll(/<a href="([^"]+)" rel="(\w+)">([^<]+)<\/a>/g)].map((m) => [
    m[3],
    m[2],
    m[1].replace(/&amp;/g, "&"),
  ]);

test("the first page: Older only when it is full", () => {
  assert.deepEqual(links({}, { limit: 2 }, ["9", "8"]), [["Older", "next", `${PATH}?max_id=8`]]);
  assert.deepEqual(links({}, { limit: 2 }, ["9"]), []);
});

test("going back: Newer, and Older while the page is full", () => {
  assert.deepEqual(links({}, { maxId: "8", limit: 2 }, ["7", "6"]), [
    ["Newer", "prev", `${PATH}?min_id=7`],
    ["Older", "next", `${PATH}?max_id=6`],
  ]);
  assert.deepEqual(links({}, { maxId: "6", limit: 2 }, ["5"]), [["Newer", "prev", `${PATH}?min_id=5`]]);
});

test("coming up again: Older always, Newer only from a full page", () => {
  assert.deepEqual(links({}, { minId: "5", limit: 2 }, ["7", "6"]), [
    ["Newer", "prev", `${PATH}?min_id=7`],
    ["Older", "next", `${PATH}?max_id=6`],
  ]);
  assert.deepEqual(links({}, { minId: "7", limit: 2 }, ["9"]), [["Older", "next", `${PATH}?max_id=9`]]);
});

test("an empty page past either end leads back to the newest; an empty list has no links", () => {
  assert.deepEqual(links({ limit: "2" }, { maxId: "1", limit: 2 }, []), [
    ["Back to the newest", "first", `${PATH}?limit=2`],
  ]);
  assert.deepEqual(links({}, { limit: 40 }, []), []);
});

test("the links keep the filters and the limit, leaving out those not set", () => {
  assert.deepEqual(links({ status: "all", target: "a b", limit: "2", origin: "" }, { limit: 2 }, ["9", "8"]), [
    ["Older", "next", `${PATH}?status=all&target=a+b&limit=2&max_id=8`],
  ]);
});
