/**
 * Reading a `Create` by key (src/federation/inbox/compact.ts) gives what Fedify's parse gives
 * (`parseCreate`, through `decodePost`) for every recorded Create it takes, and for variants of
 * Mastodon's that use what the recordings do not (custom emoji, video, links, several languages,
 * offsets); and it refuses, leaving the activity to Fedify, whatever it could misread.
 */
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { getDocumentLoader } from "@fedify/fedify";
import { readCompactCreate } from "../../src/federation/inbox/compact.ts";
import { decodeCreate, parseCreate } from "../../src/federation/inbox/decoded.ts";
import { recordedActivity } from "./fake_remote.ts";

const FIXTURES = join(import.meta.dirname, "fixtures");
const loaders = { contextLoader: getDocumentLoader() };
const creates = readdirSync(join(FIXTURES, "activities"))
  .map((file) => file.replace(/\.json$/, ""))
  .filter((name) => name.includes("create"));

/** Mastodon's Create with its post changed by `change`. */
function mastodonWith(change: (note: Record<string, unknown>, json: Record<string, unknown>) => void) {
  const json = recordedActivity("mastodon_create_note");
  change(json.object as Record<string, unknown>, json);
  return json;
}

/** Both readings of `json`: by key, and by Fedify's parse. */
async function both(json: Record<string, unknown>) {
  return {
    compact: readCompactCreate(structuredClone(json)),
    fedify: await parseCreate(structuredClone(json), loaders),
  };
}

describe("a Create read by key reads as Fedify's parse reads it", () => {
  test("the recorded Creates: the same reading, or none by key (Fedify's then)", async () => {
    const read: string[] = [];
    for (const name of creates) {
      const { compact, fedify } = await both(recordedActivity(name));
      if (!compact) continue;
      read.push(name);
      assert.deepEqual(compact, fedify, name);
    }
    // Mastodon's, Misskey's, GoToSocial's and the generic ones are read by key; Akkoma's own context is not known.
    assert.ok(read.includes("mastodon_create_note") && read.includes("misskey_create_note"), read.join(", "));
    assert.ok(read.includes("gotosocial_create_followers_only"), read.join(", "));
    assert.ok(!read.some((name) => name.startsWith("akkoma")), read.join(", "));
  });

  const variants: Record<string, (note: Record<string, unknown>, json: Record<string, unknown>) => void> = {
    "a custom emoji, an image and a video": (note, json) => {
      (json["@context"] as unknown[]).push({ Emoji: "toot:Emoji" });
      note.tag = [
        ...(note.tag as unknown[]),
        {
          id: "https://mastodon.example/emojis/1",
          type: "Emoji",
          name: ":rook:",
          updated: "2026-01-01T00:00:00Z",
          icon: { type: "Image", mediaType: "image/png", url: "https://files.mastodon.example/emoji/rook.png" },
        },
      ];
      note.attachment = [
        { type: "Image", mediaType: "image/jpeg", url: "https://files.mastodon.example/a.jpg", name: null },
        {
          type: "Document",
          mediaType: "video/mp4",
          url: { type: "Link", href: "https://files.mastodon.example/b.mp4" },
          width: 1280,
          height: 720,
        },
        { type: "Audio", url: "https://files.mastodon.example/c.ogg", nameMap: { de: "Ton", en: "Sound" } },
      ];
    },
    "content only by language, several languages, a summary map": (note) => {
      delete note.content;
      delete note.summary;
      note.contentMap = { fr: "<p>bonjour</p>", de: "<p>hallo</p>", "en-GB": "<p>hello</p>" };
      note.summaryMap = { fr: "attention", de: "Achtung" };
    },
    "an undetermined language first, then a regional one": (note) => {
      note.contentMap = { und: "<p>?</p>", "pt-BR": "<p>olá</p>" };
    },
    "as:Public, a single addressee, a reply, an edit, an offset, fractions of a second": (note) => {
      note.to = "as:Public";
      note.cc = "https://mastodon.example/users/Gargron/followers";
      note.inReplyTo = "https://rookery.test/users/frank/statuses/1";
      note.published = "2026-11-27T10:00:00.123456+02:00";
      note.updated = "2026-11-27T09:00:00.5Z";
      note.url = [{ type: "Link", href: "https://mastodon.example/@Gargron/1", mediaType: "text/html" }];
      note.sensitive = false;
    },
    "attributedTo as a list of objects, a context, no url": (note) => {
      note.attributedTo = [{ type: "Person", id: "https://mastodon.example/users/Gargron" }];
      note.context = "https://mastodon.example/contexts/9";
      delete note.url;
    },
  };
  for (const [name, change] of Object.entries(variants))
    test(`Mastodon's with ${name}`, async () => {
      const { compact, fedify } = await both(mastodonWith(change));
      assert.ok(compact, "read by key");
      assert.deepEqual(compact, fedify);
    });
});

describe("what reading by key leaves to Fedify", () => {
  const refused: Record<string, (note: Record<string, unknown>, json: Record<string, unknown>) => void> = {
    "an inline context that redefines a key it reads": (_note, json) =>
      (json["@context"] as unknown[]).push({ content: "as:summary" }),
    "a default language in the context": (_note, json) => (json["@context"] as unknown[]).push({ "@language": "und" }),
    "a vocabulary in the context": (_note, json) =>
      (json["@context"] as unknown[]).push({ "@vocab": "https://example.com/#" }),
    "a context at an unknown URL": (_note, json) => (json["@context"] as unknown[]).push("https://example.com/ctx"),
    "no ActivityStreams context": (_note, json) => (json["@context"] = [(json["@context"] as unknown[])[1]]),
    "a context inside the post": (note) => (note["@context"] = { content: "as:summary" }),
    "a key written as an IRI": (note) => (note["as:content"] = "<p>hidden</p>"),
    "a key written as a full IRI in a tag": (note) =>
      (note.tag = [{ type: "Mention", "https://www.w3.org/ns/activitystreams#href": "https://rookery.test/users/x" }]),
    "sensitive defined by an object": (_note, json) =>
      (json["@context"] as unknown[]).push({ sensitive: { "@id": "as:sensitive", "@type": "xsd:boolean" } }),
    "Hashtag defined as another IRI": (_note, json) =>
      (json["@context"] as unknown[]).push({ Hashtag: "https://example.com/ns#Hashtag" }),
    "a Hashtag its context does not define": (_note, json) =>
      delete ((json["@context"] as unknown[])[1] as Record<string, unknown>).Hashtag,
    "an Emoji its context does not define": (note) =>
      (note.tag = [{ type: "Emoji", name: ":x:", icon: { type: "Image", url: "https://x.example/x.png" } }]),
    "a tag of another kind": (note) => (note.tag = [{ type: "Link", href: "https://example.com" }]),
    "a day the month does not have": (note) => (note.published = "2026-02-30T08:00:00Z"),
    "a date without its offset": (note) => (note.published = "2026-11-27T08:00:00"),
    "a language tag Intl cannot read": (note) => (note.contentMap = { "en_US!": "<p>hi</p>" }),
    "a width that is not a whole number": (note) => ((note.attachment as Record<string, unknown>[])[0]!.width = 1.5),
    "sensitive as a string": (note) => (note.sensitive = "true"),
    "an id that is not a URL": (note) => (note.id = "urn:uuid:1"),
    "a poll's option (a vote)": (note) => (note.name = "yes"),
  };
  for (const [name, change] of Object.entries(refused))
    test(name, () => {
      assert.equal(readCompactCreate(mastodonWith(change)), undefined);
    });

  test("what is left to Fedify is still decoded on arrival when it can be read without fetching", async () => {
    // A default language: JSON-LD gives the content that language, which reading by key would not.
    const json = mastodonWith((note, json) => {
      (json["@context"] as unknown[]).push({ "@language": "de" });
      delete note.contentMap;
    });
    assert.equal(readCompactCreate(json), undefined);
    assert.equal((await decodeCreate(json, loaders))?.post.language, "de");
    // One whose context would have to be fetched goes to the listeners whole.
    const unknown = mastodonWith((_note, json) => (json["@context"] as unknown[]).push("https://example.com/ctx"));
    assert.equal(await decodeCreate(unknown, loaders), undefined);
  });
});
