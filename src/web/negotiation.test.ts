import assert from "node:assert/strict";
import { test } from "node:test";
import { preferredFormat } from "./negotiation.ts";

test("the Accept header picks the page or the ActivityPub document", () => {
  const cases: Array<[string | undefined, "html" | "activity"]> = [
    [undefined, "html"],
    ["", "html"],
    ["*/*", "html"],
    ["text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "html"],
    ["application/activity+json", "activity"],
    ["application/json", "activity"],
    ['application/ld+json; profile="https://www.w3.org/ns/activitystreams"', "activity"],
    ["application/activity+json, application/ld+json", "activity"],
    ["Application/Activity+JSON", "activity"],
    // Quality decides; the first listed wins a tie.
    ["text/html;q=0.5, application/activity+json", "activity"],
    ["application/activity+json;q=0.5, text/html", "html"],
    ["text/html, application/activity+json", "html"],
    ["application/activity+json, text/html", "activity"],
    ["application/activity+json;q=0, text/html;q=0.1", "html"],
    // Nonsense qualities are ignored, not trusted.
    ["application/activity+json;q=7, text/html;q=0.1", "html"],
    ["application/json;q=abc", "html"],
  ];
  for (const [accept, expected] of cases) assert.equal(preferredFormat(accept), expected, String(accept));
});
