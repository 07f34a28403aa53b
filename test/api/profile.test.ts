/**
 * Profile editing: PATCH /api/v1/accounts/update_credentials (every field, in form, JSON and
 * multipart bodies), avatar and header uploads and their removal, and GET /api/v1/preferences.
 * Each change is checked in the response, in verify_credentials and in GET /api/v1/accounts/:id.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import sharp from "sharp";
import {
  appToken,
  createUser,
  createTestServer,
  errorOf,
  get,
  multipartBody,
  request,
  standardAccounts,
  tokenFor,
  type StandardAccounts,
  type TestServer,
  type TestUser,
} from "../kit.ts";
import { openApiSkip, validateSchema } from "../openapi.ts";

const UPDATE = "/api/v1/accounts/update_credentials";
const VERIFY = "/api/v1/accounts/verify_credentials";
const PREFERENCES = "/api/v1/preferences";
const MISSING_AVATAR = "https://rookery.test/avatars/original/missing.png";
const MISSING_HEADER = "https://rookery.test/headers/original/missing.png";
const FAMILY = "👨‍👩‍👧‍👦";

type Encoding = "form" | "json" | "multipart";
type Rgb = [number, number, number];
type Part = Parameters<typeof multipartBody>[0][number];

const RED: Rgb = [255, 0, 0];
const GREEN: Rgb = [0, 255, 0];
const BLUE: Rgb = [0, 0, 255];

function link(href: string, visible: string, rest: string, rel: string): string {
  const long = rest !== "";
  return (
    `<a href="${href}" target="_blank" rel="${rel}" translate="no"><span class="invisible">https://</span>` +
    `<span class="${long ? "ellipsis" : ""}">${visible}</span><span class="invisible">${rest}</span></a>`
  );
}

const mention = (href: string, label: string) =>
  `<span class="h-card" translate="no"><a href="${href}" class="u-url mention">@<span>${label}</span></a></span>`;

/** An image made of equal bands of colour, side by side (`vertical`) or stacked. */
async function bands(
  width: number,
  height: number,
  colors: Rgb[],
  vertical: boolean,
  format: "png" | "jpeg" | "webp" | "gif",
): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const band = Math.min(
        colors.length - 1,
        Math.floor(((vertical ? x : y) * colors.length) / (vertical ? width : height)),
      );
      raw.set(colors[band], (y * width + x) * 3);
    }
  }
  const image = sharp(raw, { raw: { width, height, channels: 3 } });
  return (
    format === "png"
      ? image.png()
      : format === "jpeg"
        ? image.jpeg({ quality: 95 })
        : format === "webp"
          ? image.webp({ quality: 95 })
          : image.gif()
  ).toBuffer();
}

/** A two-frame animated GIF, first frame `first`, second frame `second`. */
async function animatedGif(width: number, height: number, first: Rgb, second: Rgb): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 2 * 4);
  for (let i = 0; i < width * height * 2; i++) raw.set([...(i < width * height ? first : second), 255], i * 4);
  return sharp(raw, { raw: { width, height: height * 2, channels: 4, pageHeight: height } })
    .gif({ loop: 0, delay: [200, 200] })
    .toBuffer();
}

/** The colour of one pixel (of the first frame). */
async function pixel(image: Buffer, x: number, y: number): Promise<Rgb> {
  const { data, info } = await sharp(image).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (y * info.width + x) * info.channels;
  return [data[at], data[at + 1], data[at + 2]];
}

function assertColor(actual: Rgb, expected: Rgb, label: string): void {
  assert.ok(
    actual.every((channel, i) => Math.abs(channel - expected[i]) < 48),
    `${label}: expected about ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`,
  );
}

/** A parsed JSON body (what `res.json()` gives). */
type Body = ReturnType<typeof JSON.parse>;
/** The account's three views: [PATCH response, verify_credentials, GET /api/v1/accounts/:id]. */
type Views = [Body, Body, Body];

describe("profile", () => {
  let server: TestServer;
  let accounts: StandardAccounts;
  before(async () => {
    server = await createTestServer();
    accounts = await standardAccounts(server.ctx);
  });
  after(() => server.close());

  let counter = 0;
  /** A fresh user for each story, so tests do not see each other's changes. */
  const freshUser = () => createUser(server.ctx, `user${++counter}`);

  const patch = (
    user: TestUser | string,
    options: { form?: Record<string, string> | Array<[string, string]>; json?: unknown } = {},
  ) => request(server.app, "PATCH", UPDATE, { token: typeof user === "string" ? user : user.token, ...options });

  const patchMultipart = (user: TestUser | string, parts: Part[]) =>
    request(server.app, "PATCH", UPDATE, { token: typeof user === "string" ? user : user.token, parts });

  /** Sends Rails-style name/value pairs as a form or multipart body, or `json` as JSON. */
  const send = (user: TestUser, encoding: Encoding, pairs: Array<[string, string]>, json: unknown) =>
    encoding === "form"
      ? patch(user, { form: pairs })
      : encoding === "json"
        ? patch(user, { json })
        : patchMultipart(
            user,
            pairs.map(([name, value]) => ({ name, value })),
          );

  async function views(user: TestUser, response: LightMyRequestResponse): Promise<Views> {
    assert.equal(response.statusCode, 200, response.body);
    assert.match(response.headers["content-type"] as string, /^application\/json; charset=utf-8$/);
    const verify = await get(server.app, VERIFY, user.token);
    assert.equal(verify.statusCode, 200, verify.body);
    const show = await get(server.app, `/api/v1/accounts/${user.account.id}`);
    assert.equal(show.statusCode, 200, show.body);
    return [response.json(), verify.json(), show.json()];
  }

  /** The account as stored now (what verify_credentials says). */
  const current = async (user: TestUser) => (await get(server.app, VERIFY, user.token)).json();

  describe("PATCH /api/v1/accounts/update_credentials: text", () => {
    const NOTE = [
      'Hello <b>world</b> & "friends"',
      "second line",
      "",
      "https://example.com/a/very/long/path/that/goes/on says @bob, @rita@remote.example and @nobody #Caturday",
    ].join("\n");
    const NOTE_HTML =
      "<p>Hello &lt;b&gt;world&lt;/b&gt; &amp; &quot;friends&quot;<br />second line</p><p>" +
      link(
        "https://example.com/a/very/long/path/that/goes/on",
        "example.com/a/very/long/path/t",
        "hat/goes/on",
        "nofollow noopener",
      ) +
      ` says ${mention("https://rookery.test/@bob", "bob")}, ${mention("https://remote.example/@rita", "rita")} and @nobody ` +
      '<a href="https://rookery.test/tags/Caturday" class="mention hashtag" rel="tag">#<span>Caturday</span></a></p>';

    for (const encoding of ["form", "json", "multipart"] as const) {
      test(`display_name and note round-trip (${encoding})`, async () => {
        const user = await freshUser();
        const displayName = `<b>Al</b> & co ${FAMILY}`;
        const all = await views(
          user,
          await send(
            user,
            encoding,
            [
              ["display_name", displayName],
              ["note", NOTE],
            ],
            { display_name: displayName, note: NOTE },
          ),
        );
        for (const [i, body] of all.entries()) {
          assert.equal(body.display_name, displayName, `view ${i}`);
          assert.equal(body.note, NOTE_HTML, `view ${i}`);
        }
        assert.equal(all[0].source.note, NOTE);
        assert.equal(all[1].source.note, NOTE);
        assert.equal("source" in all[2], false);
      });
    }

    test("surrounding spaces of the display name are dropped", async () => {
      const user = await freshUser();
      const [body] = await views(user, await patch(user, { form: { display_name: "  Spacey  " } }));
      assert.equal(body.display_name, "Spacey");
    });

    test("surrounding whitespace of the note is dropped", {}, async () => {
      const user = await freshUser();
      const [body] = await views(user, await patch(user, { form: { note: "  hi  \n" } }));
      assert.equal(body.source.note, "hi");
      assert.equal(body.note, "<p>hi</p>");
    });

    test("an empty note and display name clear them", async () => {
      const user = await freshUser();
      await patch(user, { form: { display_name: "Name", note: "bio" } });
      const all = await views(user, await patch(user, { form: { display_name: "", note: "" } }));
      for (const body of all) {
        assert.equal(body.display_name, "");
        assert.equal(body.note, "");
      }
      assert.equal(all[1].source.note, "");
    });

    test("fields and settings not sent are left alone", async () => {
      const user = await freshUser();
      await patch(user, { form: { display_name: "Kept", note: "kept", locked: "true", "source[privacy]": "private" } });
      const [body] = await views(user, await patch(user, { form: { bot: "true" } }));
      assert.equal(body.display_name, "Kept");
      assert.equal(body.note, "<p>kept</p>");
      assert.equal(body.locked, true);
      assert.equal(body.bot, true);
      assert.equal(body.source.privacy, "private");
    });

    test("display name: 30 characters are accepted, 31 are 422; an emoji ZWJ sequence counts 1", async () => {
      const user = await freshUser();
      let [body] = await views(user, await patch(user, { form: { display_name: "a".repeat(30) } }));
      assert.equal(body.display_name, "a".repeat(30));
      [body] = await views(user, await patch(user, { form: { display_name: FAMILY.repeat(30) } }));
      assert.equal(body.display_name, FAMILY.repeat(30));
      assert.deepEqual(errorOf(await patch(user, { form: { display_name: "a".repeat(31) } })), [
        422,
        "Validation failed: Display name is too long (maximum is 30 characters)",
      ]);
      assert.equal((await patch(user, { form: { display_name: FAMILY.repeat(31) } })).statusCode, 422);
      assert.equal((await current(user)).display_name, FAMILY.repeat(30));
    });

    test("display name: the limit applies after surrounding spaces are dropped", {}, async () => {
      const user = await freshUser();
      const [body] = await views(user, await patch(user, { form: { display_name: ` ${"b".repeat(30)} ` } }));
      assert.equal(body.display_name, "b".repeat(30));
    });

    test("note: 500 characters are accepted, 501 are 422 (grapheme clusters)", async () => {
      const user = await freshUser();
      let [body] = await views(user, await patch(user, { form: { note: "n".repeat(500) } }));
      assert.equal(body.source.note, "n".repeat(500));
      [body] = await views(user, await patch(user, { form: { note: FAMILY.repeat(500) } }));
      assert.equal(body.source.note, FAMILY.repeat(500));
      const res = await patch(user, { form: { note: "x".repeat(501) } });
      assert.equal(res.statusCode, 422);
      assert.match(res.json().error, /^Validation failed: Note /);
      assert.equal((await current(user)).source.note, FAMILY.repeat(500));
    });

    test("note: a URL counts as 23 characters toward the 500", {}, async () => {
      const user = await freshUser();
      const note = `${"n".repeat(470)} https://example.com/${"p".repeat(100)}`;
      const [body] = await views(user, await patch(user, { form: { note } }));
      assert.equal(body.source.note, note);
    });

    test("a 422 stores nothing: valid parts of the same request are not applied", async () => {
      const user = await freshUser();
      await patch(user, { form: { display_name: "Before", note: "before", locked: "false" } });
      const attempts: Array<Record<string, string>> = [
        { display_name: "After", locked: "true", note: "y".repeat(501) },
        { display_name: "a".repeat(31), note: "after", bot: "true" },
        { display_name: "After", "source[privacy]": "direct", "source[sensitive]": "true" },
        { note: "after", "source[language]": "klingon", discoverable: "true" },
        {
          display_name: "After",
          "fields_attributes[0][name]": "a",
          "fields_attributes[0][value]": "1",
          "fields_attributes[1][name]": "b",
          "fields_attributes[1][value]": "2",
          "fields_attributes[2][name]": "c",
          "fields_attributes[2][value]": "3",
          "fields_attributes[3][name]": "d",
          "fields_attributes[3][value]": "4",
          "fields_attributes[4][name]": "e",
          "fields_attributes[4][value]": "5",
        },
        { display_name: "After", "fields_attributes[0][name]": "n".repeat(256), "fields_attributes[0][value]": "v" },
      ];
      for (const form of attempts) {
        const res = await patch(user, { form });
        assert.equal(res.statusCode, 422, JSON.stringify(form).slice(0, 80));
        assert.match(res.json().error, /^Validation failed: /);
      }
      const [, verify, show] = await views(user, await patch(user, {}));
      for (const body of [verify, show]) {
        assert.equal(body.display_name, "Before");
        assert.equal(body.note, "<p>before</p>");
        assert.equal(body.locked, false);
        assert.equal(body.bot, false);
        assert.deepEqual(body.fields, []);
        assert.equal(body.discoverable, null);
      }
      assert.equal(verify.source.privacy, "public");
      assert.equal(verify.source.sensitive, false);
      assert.equal(verify.source.language, "");
    });

    test("an empty body changes nothing and answers the CredentialAccount", async () => {
      const user = await freshUser();
      const res = await patch(user, {});
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().id, user.account.id);
      assert.equal(res.json().source.privacy, "public");
    });
  });

  describe("PATCH /api/v1/accounts/update_credentials: flags", () => {
    const FLAGS = ["locked", "bot", "discoverable", "hide_collections", "indexable"] as const;
    /** How each body spells true and false (JSON uses real booleans). */
    const spelling = { form: ["true", "false"], multipart: ["1", "0"] } as const;

    function flagBody(encoding: Encoding, value: boolean): [Array<[string, string]>, unknown] {
      const text = encoding === "json" ? "" : spelling[encoding][value ? 0 : 1];
      return [FLAGS.map((flag) => [flag, text]), Object.fromEntries(FLAGS.map((flag) => [flag, value]))];
    }

    function assertFlags(all: Views, value: boolean): void {
      for (const [i, body] of all.entries()) {
        for (const flag of FLAGS) assert.equal(body[flag], value, `${flag} in view ${i}`);
        assert.equal(body.noindex, !value, `noindex follows indexable in view ${i}`);
      }
      for (const body of all.slice(0, 2)) {
        assert.equal(body.source.discoverable, value);
        assert.equal(body.source.hide_collections, value);
        assert.equal(body.source.indexable, value);
      }
    }

    test("defaults of a new account", async () => {
      const body = await current(await freshUser());
      assert.equal(body.locked, false);
      assert.equal(body.bot, false);
      assert.equal(body.indexable, false);
      assert.equal(body.noindex, true);
    });

    for (const encoding of ["form", "json", "multipart"] as const) {
      test(`locked, bot, discoverable, hide_collections and indexable set and clear (${encoding})`, async () => {
        const user = await freshUser();
        let [pairs, json] = flagBody(encoding, true);
        assertFlags(await views(user, await send(user, encoding, pairs, json)), true);
        [pairs, json] = flagBody(encoding, false);
        assertFlags(await views(user, await send(user, encoding, pairs, json)), false);
      });
    }

    test("booleans are cast like Rails: 0 f off FALSE are false, anything else true", async () => {
      const user = await freshUser();
      for (const text of ["1", "t", "on", "yes", "TRUE"]) {
        assert.equal((await patch(user, { form: { locked: text } })).json().locked, true, text);
        await patch(user, { form: { locked: "0" } });
      }
      for (const text of ["0", "f", "off", "FALSE", "false"]) {
        await patch(user, { form: { locked: "1" } });
        assert.equal((await patch(user, { form: { locked: text } })).json().locked, false, text);
      }
    });

    test("each flag changes alone", async () => {
      const user = await freshUser();
      // Unset, discoverable and hide_collections are null; the others false.
      const state: Record<string, boolean | null> = {
        locked: false,
        bot: false,
        discoverable: null,
        hide_collections: null,
        indexable: false,
      };
      for (const flag of FLAGS) {
        state[flag] = true;
        const all = await views(user, await patch(user, { form: { [flag]: "true" } }));
        for (const body of all)
          for (const other of FLAGS) assert.equal(body[other], state[other], `${other} after setting ${flag}`);
      }
    });
  });

  describe("PATCH /api/v1/accounts/update_credentials: source", () => {
    for (const encoding of ["form", "json", "multipart"] as const) {
      test(`source[privacy], source[sensitive] and source[language] (${encoding})`, async () => {
        const user = await freshUser();
        const steps: Array<[string, boolean, string]> = [
          ["unlisted", true, "de"],
          ["private", false, "ja"],
          ["public", true, ""],
        ];
        for (const [privacy, sensitive, language] of steps) {
          const pairs: Array<[string, string]> = [
            ["source[privacy]", privacy],
            ["source[sensitive]", String(sensitive)],
            ["source[language]", language],
          ];
          const [body, verify] = await views(
            user,
            await send(user, encoding, pairs, { source: { privacy, sensitive, language } }),
          );
          for (const credential of [body, verify]) {
            assert.deepEqual(
              [credential.source.privacy, credential.source.sensitive, credential.source.language],
              [privacy, sensitive, language],
            );
          }
          const preferences = (await get(server.app, PREFERENCES, user.token)).json();
          assert.equal(preferences["posting:default:visibility"], privacy);
          assert.equal(preferences["posting:default:sensitive"], sensitive);
          assert.equal(preferences["posting:default:language"], language || null);
        }
      });
    }

    test("one source setting alone leaves the others", async () => {
      const user = await freshUser();
      await patch(user, {
        form: { "source[privacy]": "private", "source[sensitive]": "true", "source[language]": "fr" },
      });
      const [body] = await views(user, await patch(user, { form: { "source[language]": "es" } }));
      assert.deepEqual([body.source.privacy, body.source.sensitive, body.source.language], ["private", true, "es"]);
    });

    test("privacy direct or junk, and a language that is not ISO 639-1, are 422", async () => {
      const user = await freshUser();
      for (const privacy of ["direct", "everyone", "PUBLIC"]) {
        const res = await patch(user, { form: { "source[privacy]": privacy } });
        assert.equal(res.statusCode, 422, privacy);
        assert.match(res.json().error, /^Validation failed: /);
      }
      for (const language of ["xx", "eng", "english", "EN", "en-US"]) {
        const res = await patch(user, { json: { source: { language } } });
        assert.equal(res.statusCode, 422, language);
        assert.match(res.json().error, /^Validation failed: /);
      }
      const body = await current(user);
      assert.equal(body.source.privacy, "public");
      assert.equal(body.source.language, "");
    });

    test("the response and verify_credentials match the CredentialAccount schema", { skip: openApiSkip }, async () => {
      const user = await freshUser();
      const all = await views(
        user,
        await patch(user, {
          json: {
            display_name: "Schema",
            note: "https://example.com/x @bob",
            locked: true,
            bot: true,
            discoverable: true,
            hide_collections: true,
            indexable: true,
            fields_attributes: [{ name: "Web", value: "https://user.example/x" }],
            source: { privacy: "unlisted", sensitive: true, language: "en" },
          },
        }),
      );
      assert.deepEqual(validateSchema("CredentialAccount", all[0]), []);
      assert.deepEqual(validateSchema("CredentialAccount", all[1]), []);
      assert.deepEqual(validateSchema("Account", all[2]), []);
    });
  });

  describe("PATCH /api/v1/accounts/update_credentials: fields_attributes", () => {
    const WEB = link("https://alice.example/page", "alice.example/page", "", "nofollow noopener me");
    const expectedFields = [
      { name: "Web", value: WEB, verified_at: null },
      { name: "Pronouns", value: "she/her &lt;3", verified_at: null },
      {
        name: "Friends",
        value: `${mention("https://rookery.test/@bob", "bob")} ${mention("https://remote.example/@rita", "rita@remote.example")}`,
        verified_at: null,
      },
      {
        name: "<i>Tag</i>",
        value:
          '<a href="https://rookery.test/tags/fediverse" class="mention hashtag" rel="tag">#<span>fediverse</span></a>',
        verified_at: null,
      },
    ];
    const sourceFields = [
      { name: "Web", value: "https://alice.example/page", verified_at: null },
      { name: "Pronouns", value: "she/her <3", verified_at: null },
      { name: "Friends", value: "@bob @rita@remote.example", verified_at: null },
      { name: "<i>Tag</i>", value: "#fediverse", verified_at: null },
    ];
    const hashPairs = (
      fields: Array<{ name: string; value: string }>,
      keys = fields.map((_, i) => String(i)),
    ): Array<[string, string]> =>
      fields.flatMap((f, i): Array<[string, string]> => [
        [`fields_attributes[${keys[i]}][name]`, f.name],
        [`fields_attributes[${keys[i]}][value]`, f.value],
      ]);

    function assertFields(all: Views): void {
      for (const [i, body] of all.entries()) assert.deepEqual(body.fields, expectedFields, `view ${i}`);
      for (const body of all.slice(0, 2)) assert.deepEqual(body.source.fields, sourceFields);
    }

    test("a hash with keys 0..3 in a form body", async () => {
      const user = await freshUser();
      assertFields(await views(user, await patch(user, { form: hashPairs(sourceFields) })));
    });

    test("a hash with keys 0..3 in a multipart body", async () => {
      const user = await freshUser();
      assertFields(
        await views(
          user,
          await patchMultipart(
            user,
            hashPairs(sourceFields).map(([name, value]) => ({ name, value })),
          ),
        ),
      );
    });

    test("a JSON array", async () => {
      const user = await freshUser();
      assertFields(
        await views(
          user,
          await patch(user, { json: { fields_attributes: sourceFields.map(({ name, value }) => ({ name, value })) } }),
        ),
      );
    });

    test("a JSON hash", async () => {
      const user = await freshUser();
      const hash = Object.fromEntries(sourceFields.map(({ name, value }, i) => [String(i), { name, value }]));
      assertFields(await views(user, await patch(user, { json: { fields_attributes: hash } })));
    });

    test("fields keep the order given, whatever the keys", {}, async () => {
      const user = await freshUser();
      const form = hashPairs(
        [
          { name: "first", value: "1" },
          { name: "second", value: "2" },
        ],
        ["5", "2"],
      );
      const [body] = await views(user, await patch(user, { form }));
      assert.deepEqual(
        body.fields.map((f: { name: string }) => f.name),
        ["first", "second"],
      );
    });

    test("pairs with an empty name and value are dropped; the order of the rest is kept", async () => {
      const user = await freshUser();
      const form = hashPairs([
        { name: "", value: "" },
        { name: "A", value: "1" },
        { name: "   ", value: "  " },
        { name: "B", value: "2" },
      ]);
      const all = await views(user, await patch(user, { form }));
      for (const body of all)
        assert.deepEqual(
          body.fields.map((f: { name: string; value: string }) => [f.name, f.value]),
          [
            ["A", "1"],
            ["B", "2"],
          ],
        );
      assert.deepEqual(
        all[0].source.fields.map((f: { name: string }) => f.name),
        ["A", "B"],
      );
    });

    test("a value without a name is 422", {}, async () => {
      const user = await freshUser();
      const res = await patch(user, { form: hashPairs([{ name: "", value: "orphan" }]) });
      assert.equal(res.statusCode, 422);
      assert.deepEqual((await current(user)).fields, []);
    });

    test("sending the fields again replaces them all; an empty JSON array clears them", async () => {
      const user = await freshUser();
      await patch(user, {
        form: hashPairs([
          { name: "A", value: "1" },
          { name: "B", value: "2" },
        ]),
      });
      let [body] = await views(user, await patch(user, { form: hashPairs([{ name: "C", value: "3" }]) }));
      assert.deepEqual(
        body.fields.map((f: { name: string }) => f.name),
        ["C"],
      );
      [body] = await views(user, await patch(user, { json: { fields_attributes: [] } }));
      assert.deepEqual(body.fields, []);
      assert.deepEqual(body.source.fields, []);
    });

    test("4 fields are accepted, 5 are 422", async () => {
      const user = await freshUser();
      const four = [1, 2, 3, 4].map((n) => ({ name: `n${n}`, value: `v${n}` }));
      const [body] = await views(user, await patch(user, { json: { fields_attributes: four } }));
      assert.equal(body.fields.length, 4);
      const res = await patch(user, { json: { fields_attributes: [...four, { name: "n5", value: "v5" }] } });
      assert.equal(res.statusCode, 422);
      assert.match(res.json().error, /^Validation failed: /);
      assert.deepEqual(
        (await current(user)).source.fields.map((f: { name: string }) => f.name),
        ["n1", "n2", "n3", "n4"],
      );
    });

    test("names and values of 255 characters are accepted, 256 are 422", async () => {
      const user = await freshUser();
      const [body] = await views(
        user,
        await patch(user, { form: hashPairs([{ name: "n".repeat(255), value: "v".repeat(255) }]) }),
      );
      assert.deepEqual(body.source.fields, [{ name: "n".repeat(255), value: "v".repeat(255), verified_at: null }]);
      for (const field of [
        { name: "n".repeat(256), value: "v" },
        { name: "n", value: "v".repeat(256) },
      ]) {
        const res = await patch(user, { form: hashPairs([field]) });
        assert.equal(res.statusCode, 422);
        assert.match(res.json().error, /^Validation failed: /);
      }
      assert.equal((await current(user)).source.fields[0].name, "n".repeat(255));
    });

    test("a long link in a value gets the ellipsis markup and rel me", async () => {
      const user = await freshUser();
      const url = "https://user.example/a/very/long/path/that/goes/on";
      const [body] = await views(user, await patch(user, { form: hashPairs([{ name: "Home", value: url }]) }));
      assert.equal(
        body.fields[0].value,
        link(url, "user.example/a/very/long/path/", "that/goes/on", "nofollow noopener me"),
      );
    });

    test("verified_at survives an update that keeps the same name and value", async () => {
      const user = await freshUser();
      await patch(user, { form: hashPairs([{ name: "Web", value: "https://user.example/me" }]) });
      const row = await server.ctx.db.kysely
        .selectFrom("accounts")
        .select("fields")
        .where("id", "=", user.account.id)
        .executeTakeFirstOrThrow();
      const stored = JSON.parse(row.fields) as Array<Record<string, unknown>>;
      stored[0].verified_at = "2024-01-02T03:04:05.000+00:00";
      await server.ctx.db.kysely
        .updateTable("accounts")
        .set({ fields: JSON.stringify(stored) })
        .where("id", "=", user.account.id)
        .execute();
      const [body, , show] = await views(
        user,
        await patch(user, {
          form: hashPairs([
            { name: "Web", value: "https://user.example/me" },
            { name: "New", value: "x" },
          ]),
        }),
      );
      assert.equal(body.fields[0].verified_at, "2024-01-02T03:04:05.000+00:00");
      assert.equal(show.fields[0].verified_at, "2024-01-02T03:04:05.000+00:00");
      assert.equal(body.fields[1].verified_at, null);
      const [changed] = await views(
        user,
        await patch(user, { form: hashPairs([{ name: "Web", value: "https://user.example/other" }]) }),
      );
      assert.equal(changed.fields[0].verified_at, null);
    });

    test("verified_at survives renaming a field whose value is unchanged", {}, async () => {
      const user = await freshUser();
      await patch(user, { form: hashPairs([{ name: "Web", value: "https://user.example/me" }]) });
      await server.ctx.db.kysely
        .updateTable("accounts")
        .set({
          fields: JSON.stringify([
            { ...(await current(user)).source.fields[0], verified_at: "2024-01-02T03:04:05.000+00:00" },
          ]),
        })
        .where("id", "=", user.account.id)
        .execute();
      const [body] = await views(
        user,
        await patch(user, { form: hashPairs([{ name: "Homepage", value: "https://user.example/me" }]) }),
      );
      assert.equal(body.fields[0].verified_at, "2024-01-02T03:04:05.000+00:00");
    });
  });

  describe("PATCH /api/v1/accounts/update_credentials: authorization", () => {
    test("401 without a token or with an unknown one", async () => {
      assert.deepEqual(errorOf(await request(server.app, "PATCH", UPDATE, { form: { display_name: "x" } })), [
        401,
        "The access token is invalid",
      ]);
      assert.deepEqual(errorOf(await patch("nope", { form: { display_name: "x" } })), [
        401,
        "The access token is invalid",
      ]);
    });

    test("422 for an app token", async () => {
      assert.deepEqual(errorOf(await patch(await appToken(server.ctx, "write"), { form: { display_name: "x" } })), [
        422,
        "This method requires an authenticated user",
      ]);
    });

    test("403 without write:accounts; write and write:accounts work", async () => {
      const user = await freshUser();
      for (const scopes of ["read", "read:accounts", "write:statuses", "profile", "follow"]) {
        const token = await tokenFor(server.ctx, user, scopes);
        assert.deepEqual(
          errorOf(await patch(token, { form: { display_name: scopes } })),
          [403, "This action is outside the authorized scopes"],
          scopes,
        );
      }
      for (const scopes of ["write", "write:accounts"]) {
        const token = await tokenFor(server.ctx, user, scopes);
        const res = await patch(token, { form: { display_name: scopes } });
        assert.equal(res.statusCode, 200, scopes);
        assert.equal(res.json().display_name, scopes);
      }
    });
  });

  describe("avatar and header", () => {
    const upload = (user: TestUser | string, parts: Part[]) => patchMultipart(user, parts);
    const image = (name: "avatar" | "header", data: Buffer, filename: string, type: string): Part => ({
      name,
      value: data,
      filename,
      type,
    });

    /** Fetches a media URL through the app. */
    async function fetchImage(url: string, type: string): Promise<Buffer> {
      assert.ok(url.startsWith("https://rookery.test/system/"), url);
      const res = await get(server.app, new URL(url).pathname);
      assert.equal(res.statusCode, 200, url);
      assert.equal(res.headers["content-type"], type, url);
      return res.rawPayload;
    }

    const size = async (data: Buffer) => {
      const meta = await sharp(data, { animated: true }).metadata();
      return [meta.format, meta.width, meta.pageHeight ?? meta.height, meta.pages ?? 1] as const;
    };

    test("a PNG avatar is cropped to fill 400×400 and served as PNG", async () => {
      const user = await freshUser();
      // Three vertical bands: a cover crop keeps only the green middle; squashing or letterboxing would not.
      const png = await bands(1200, 400, [RED, GREEN, BLUE], true, "png");
      const all = await views(user, await upload(user, [image("avatar", png, "me.png", "image/png")]));
      const url = all[0].avatar as string;
      assert.match(url, /^https:\/\/rookery\.test\/system\/.+\.png$/);
      for (const body of all) {
        assert.equal(body.avatar, url);
        assert.equal(body.avatar_static, url);
        assert.equal(body.header, MISSING_HEADER);
      }
      const served = await fetchImage(url, "image/png");
      assert.deepEqual(await size(served), ["png", 400, 400, 1]);
      for (const [x, y] of [
        [0, 0],
        [399, 0],
        [0, 399],
        [399, 399],
        [200, 200],
      ])
        assertColor(await pixel(served, x, y), GREEN, `pixel ${x},${y}`);
    });

    test("a JPEG header is cropped to fill 1500×500 and served as JPEG", async () => {
      const user = await freshUser();
      const jpeg = await bands(1500, 1500, [RED, GREEN, BLUE], false, "jpeg");
      const all = await views(user, await upload(user, [image("header", jpeg, "header.jpg", "image/jpeg")]));
      const url = all[0].header as string;
      assert.match(url, /^https:\/\/rookery\.test\/system\/.+\.jpe?g$/);
      for (const body of all) {
        assert.equal(body.header, url);
        assert.equal(body.header_static, url);
        assert.equal(body.avatar, MISSING_AVATAR);
      }
      const served = await fetchImage(url, "image/jpeg");
      assert.deepEqual(await size(served), ["jpeg", 1500, 500, 1]);
      for (const [x, y] of [
        [10, 10],
        [1490, 10],
        [10, 490],
        [750, 250],
      ])
        assertColor(await pixel(served, x, y), GREEN, `pixel ${x},${y}`);
    });

    test("a large JPEG avatar is scaled down to 400×400", async () => {
      const user = await freshUser();
      const jpeg = await bands(3000, 3000, [GREEN], true, "jpeg");
      const [body] = await views(user, await upload(user, [image("avatar", jpeg, "big.jpeg", "image/jpeg")]));
      assert.deepEqual(await size(await fetchImage(body.avatar, "image/jpeg")), ["jpeg", 400, 400, 1]);
    });

    test("a WebP avatar and header are kept as WebP", async () => {
      const user = await freshUser();
      const avatar = await bands(800, 800, [BLUE], true, "webp");
      const header = await bands(3000, 1000, [BLUE], true, "webp");
      const [body] = await views(
        user,
        await upload(user, [
          image("avatar", avatar, "a.webp", "image/webp"),
          image("header", header, "h.webp", "image/webp"),
        ]),
      );
      assert.deepEqual(await size(await fetchImage(body.avatar, "image/webp")), ["webp", 400, 400, 1]);
      assert.deepEqual(await size(await fetchImage(body.header, "image/webp")), ["webp", 1500, 500, 1]);
    });

    test("smaller images are not enlarged", async () => {
      const user = await freshUser();
      const avatar = await bands(100, 80, [RED], true, "png");
      const header = await bands(600, 100, [RED], true, "png");
      const [body] = await views(
        user,
        await upload(user, [
          image("avatar", avatar, "small.png", "image/png"),
          image("header", header, "small.png", "image/png"),
        ]),
      );
      assert.deepEqual(await size(await fetchImage(body.avatar, "image/png")), ["png", 100, 80, 1]);
      assert.deepEqual(await size(await fetchImage(body.header, "image/png")), ["png", 600, 100, 1]);
    });

    test("an animated GIF avatar stays animated; avatar_static is a PNG of the first frame", async () => {
      const user = await freshUser();
      const gif = await animatedGif(600, 500, RED, BLUE);
      assert.equal((await sharp(gif, { animated: true }).metadata()).pages, 2);
      const all = await views(user, await upload(user, [image("avatar", gif, "anim.gif", "image/gif")]));
      const { avatar, avatar_static: still } = all[0];
      assert.match(avatar, /^https:\/\/rookery\.test\/system\/.+\.gif$/);
      assert.match(still, /^https:\/\/rookery\.test\/system\/.+\.png$/);
      assert.notEqual(avatar, still);
      for (const body of all) assert.deepEqual([body.avatar, body.avatar_static], [avatar, still]);
      const animated = await fetchImage(avatar, "image/gif");
      assert.deepEqual(await size(animated), ["gif", 400, 400, 2]);
      const frames = await sharp(animated, { animated: true })
        .removeAlpha()
        .raw()
        .toBuffer({ resolveWithObject: true });
      const second = (400 * 400 + 200 * 400 + 200) * frames.info.channels;
      assertColor([frames.data[second], frames.data[second + 1], frames.data[second + 2]], BLUE, "second frame");
      const staticImage = await fetchImage(still, "image/png");
      assert.deepEqual(await size(staticImage), ["png", 400, 400, 1]);
      assertColor(await pixel(staticImage, 200, 200), RED, "first frame");
    });

    test("a still GIF header is served as GIF with header_static equal to header", async () => {
      const user = await freshUser();
      const gif = await bands(1500, 500, [GREEN], true, "gif");
      const [body] = await views(user, await upload(user, [image("header", gif, "h.gif", "image/gif")]));
      assert.equal(body.header_static, body.header);
      assert.deepEqual(await size(await fetchImage(body.header, "image/gif")), ["gif", 1500, 500, 1]);
    });

    test("the image type is taken from the content, not the file name or claimed type", async () => {
      const user = await freshUser();
      const png = await bands(50, 50, [GREEN], true, "png");
      const [body] = await views(user, await upload(user, [image("avatar", png, "photo.jpg", "image/jpeg")]));
      assert.match(body.avatar, /\.png$/);
      await fetchImage(body.avatar, "image/png");
    });

    test("replacing an avatar deletes the old files (including the static one)", async () => {
      const user = await freshUser();
      const first = (
        await upload(user, [image("avatar", await animatedGif(100, 100, RED, BLUE), "a.gif", "image/gif")])
      ).json();
      await fetchImage(first.avatar, "image/gif");
      await fetchImage(first.avatar_static, "image/png");
      const header = (
        await upload(user, [image("header", await bands(300, 100, [RED], true, "png"), "h.png", "image/png")])
      ).json().header;
      const [second] = await views(
        user,
        await upload(user, [image("avatar", await bands(100, 100, [GREEN], true, "png"), "b.png", "image/png")]),
      );
      assert.notEqual(second.avatar, first.avatar);
      await fetchImage(second.avatar, "image/png");
      for (const old of [first.avatar, first.avatar_static]) {
        assert.deepEqual(errorOf(await get(server.app, new URL(old).pathname)), [404, "Not Found"], old);
      }
      assert.equal(second.header, header, "the header is untouched");
      await fetchImage(header, "image/png");
    });

    test("files that are not images are 422 and nothing is stored", async () => {
      const user = await freshUser();
      await patch(user, { form: { display_name: "Before" } });
      const cases: Array<[string, Buffer, string, string]> = [
        ["text file", Buffer.from("hello, world\n"), "notes.txt", "text/plain"],
        ["text named .png", Buffer.from("definitely not a PNG"), "fake.png", "image/png"],
        [
          "random bytes",
          Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 7919) % 256)),
          "noise.png",
          "image/png",
        ],
        [
          "PNG cut after its signature",
          (await bands(64, 64, [RED], true, "png")).subarray(0, 40),
          "cut.png",
          "image/png",
        ],
        [
          "SVG",
          Buffer.from(
            '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>',
          ),
          "x.svg",
          "image/svg+xml",
        ],
        [
          "TIFF",
          await sharp({ create: { width: 10, height: 10, channels: 3, background: "#f00" } })
            .tiff()
            .toBuffer(),
          "x.tiff",
          "image/tiff",
        ],
        ["empty file", Buffer.alloc(0), "empty.png", "image/png"],
      ];
      for (const [label, data, filename, type] of cases) {
        for (const kind of ["avatar", "header"] as const) {
          const res = await upload(user, [{ name: "display_name", value: "After" }, image(kind, data, filename, type)]);
          assert.equal(res.statusCode, 422, `${label} as ${kind}: ${res.body}`);
          assert.match(res.json().error, /^Validation failed: /, label);
        }
      }
      const body = await current(user);
      assert.equal(body.display_name, "Before");
      assert.equal(body.avatar, MISSING_AVATAR);
      assert.equal(body.header, MISSING_HEADER);
    });

    test("an avatar sent as a plain form value is 422", async () => {
      const user = await freshUser();
      assert.deepEqual(errorOf(await patch(user, { form: { avatar: "https://example.com/a.png" } })), [
        422,
        "Validation failed: Avatar must be an uploaded image file",
      ]);
    });

    test("a corrupt PNG or JPEG (readable header, broken image data) is 422, never 500", {}, async () => {
      const user = await freshUser();
      const raw = Buffer.alloc(300 * 300 * 3);
      for (let i = 0; i < raw.length; i++) raw[i] = (i * 7919) % 251;
      const png = await sharp(raw, { raw: { width: 300, height: 300, channels: 3 } })
        .png({ compressionLevel: 0 })
        .toBuffer();
      const garbled = Buffer.from(png);
      garbled.fill(0xff, 100, png.length - 100);
      const jpeg = await sharp(raw, { raw: { width: 300, height: 300, channels: 3 } })
        .jpeg()
        .toBuffer();
      const cases: Array<[string, Buffer, string]> = [
        ["PNG with garbage data", garbled, "image/png"],
        ["PNG cut in half", png.subarray(0, png.length >> 1), "image/png"],
        ["JPEG cut in half", jpeg.subarray(0, jpeg.length >> 1), "image/jpeg"],
      ];
      for (const [label, data, type] of cases) {
        const res = await upload(user, [
          { name: "display_name", value: "After" },
          image("avatar", data, "broken", type),
        ]);
        assert.equal(res.statusCode, 422, `${label}: ${res.body}`);
      }
      assert.equal((await current(user)).display_name, "");
    });

    test("an image over 8 MB is 422", async () => {
      const user = await freshUser();
      const noise = Buffer.alloc(1700 * 1700 * 3);
      for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
      const png = await sharp(noise, { raw: { width: 1700, height: 1700, channels: 3 } })
        .png({ compressionLevel: 0 })
        .toBuffer();
      assert.ok(png.length > 8 * 1024 * 1024, `${png.length} bytes`);
      const res = await upload(user, [image("avatar", png, "huge.png", "image/png")]);
      assert.equal(res.statusCode, 422, res.body);
      assert.equal((await current(user)).avatar, MISSING_AVATAR);
    });

    test("DELETE /api/v1/profile/avatar and /header reset to the defaults and delete the files", async () => {
      const user = await freshUser();
      const uploaded = (
        await upload(user, [
          image("avatar", await animatedGif(100, 100, RED, BLUE), "a.gif", "image/gif"),
          image("header", await bands(300, 100, [RED], true, "jpeg"), "h.jpg", "image/jpeg"),
        ])
      ).json();
      let all = await views(user, await request(server.app, "DELETE", "/api/v1/profile/avatar", { token: user.token }));
      for (const body of all) {
        assert.equal(body.avatar, MISSING_AVATAR);
        assert.equal(body.avatar_static, MISSING_AVATAR);
        assert.equal(body.header, uploaded.header);
      }
      assert.equal(all[0].source.privacy, "public", "the response is a CredentialAccount");
      for (const old of [uploaded.avatar, uploaded.avatar_static])
        assert.equal((await get(server.app, new URL(old).pathname)).statusCode, 404, old);
      all = await views(user, await request(server.app, "DELETE", "/api/v1/profile/header", { token: user.token }));
      for (const body of all) {
        assert.equal(body.header, MISSING_HEADER);
        assert.equal(body.header_static, MISSING_HEADER);
        assert.equal(body.avatar, MISSING_AVATAR);
      }
      assert.equal((await get(server.app, new URL(uploaded.header).pathname)).statusCode, 404);
    });

    test("DELETE without an image succeeds and changes nothing", async () => {
      const user = await freshUser();
      for (const kind of ["avatar", "header"]) {
        const res = await request(server.app, "DELETE", `/api/v1/profile/${kind}`, { token: user.token });
        assert.equal(res.statusCode, 200, kind);
        assert.equal(res.json().avatar, MISSING_AVATAR);
        assert.equal(res.json().header, MISSING_HEADER);
      }
    });

    test("the default images are served", async () => {
      for (const [path, width, height] of [
        ["/avatars/original/missing.png", 400, 400],
        ["/headers/original/missing.png", 1500, 500],
      ] as const) {
        const res = await get(server.app, path);
        assert.equal(res.statusCode, 200, path);
        assert.equal(res.headers["content-type"], "image/png");
        assert.deepEqual(await size(res.rawPayload), ["png", width, height, 1]);
      }
    });

    test("served files have long caching and no sniffing; unknown keys and traversal are 404", async () => {
      const user = await freshUser();
      const body = (
        await upload(user, [image("avatar", await bands(40, 40, [RED], true, "png"), "a.png", "image/png")])
      ).json();
      const res = await get(server.app, new URL(body.avatar).pathname);
      assert.equal(res.headers["cache-control"], "public, max-age=31536000, immutable");
      assert.equal(res.headers["x-content-type-options"], "nosniff");
      assert.equal((await get(server.app, "/system/accounts/avatars/1/original/nothing.png")).statusCode, 404);
      assert.equal((await get(server.app, "/system/accounts/avatars/1/original/nothing.exe")).statusCode, 404);
      assert.equal((await get(server.app, "/system/../../etc/passwd.png")).statusCode, 404);
      assert.equal((await get(server.app, "/system/accounts/%2e%2e/%2e%2e/x.png")).statusCode, 404);
    });

    test("uploads and deletions need a user token with write:accounts", async () => {
      const png = await bands(40, 40, [RED], true, "png");
      const user = await freshUser();
      assert.deepEqual(errorOf(await upload("", [image("avatar", png, "a.png", "image/png")])), [
        401,
        "The access token is invalid",
      ]);
      assert.deepEqual(
        errorOf(await upload(await appToken(server.ctx, "write"), [image("avatar", png, "a.png", "image/png")])),
        [422, "This method requires an authenticated user"],
      );
      assert.deepEqual(
        errorOf(await upload(await tokenFor(server.ctx, user, "read"), [image("avatar", png, "a.png", "image/png")])),
        [403, "This action is outside the authorized scopes"],
      );
      for (const kind of ["avatar", "header"]) {
        const path = `/api/v1/profile/${kind}`;
        assert.deepEqual(
          errorOf(await request(server.app, "DELETE", path)),
          [401, "The access token is invalid"],
          path,
        );
        assert.deepEqual(
          errorOf(await request(server.app, "DELETE", path, { token: await appToken(server.ctx, "write") })),
          [422, "This method requires an authenticated user"],
          path,
        );
        assert.deepEqual(
          errorOf(await request(server.app, "DELETE", path, { token: await tokenFor(server.ctx, user, "read") })),
          [403, "This action is outside the authorized scopes"],
          path,
        );
        assert.equal(
          (await request(server.app, "DELETE", path, { token: await tokenFor(server.ctx, user, "write:accounts") }))
            .statusCode,
          200,
          path,
        );
      }
      assert.equal((await current(user)).avatar, MISSING_AVATAR);
    });
  });

  describe("GET /api/v1/preferences", () => {
    test("the defaults, with exactly Mastodon's keys (no quote_policy)", async () => {
      const user = await freshUser();
      const res = await get(server.app, PREFERENCES, user.token);
      assert.equal(res.statusCode, 200);
      assert.match(res.headers["content-type"] as string, /^application\/json; charset=utf-8$/);
      assert.deepEqual(res.json(), {
        "posting:default:visibility": "public",
        "posting:default:sensitive": false,
        "posting:default:language": null,
        "reading:expand:media": "default",
        "reading:expand:spoilers": false,
        "reading:autoplay:gifs": false,
      });
    });

    test("reflects source[privacy], source[sensitive] and source[language]", async () => {
      const user = await freshUser();
      await patch(user, {
        form: { "source[privacy]": "unlisted", "source[sensitive]": "true", "source[language]": "de" },
      });
      const body = (await get(server.app, PREFERENCES, user.token)).json();
      assert.equal(body["posting:default:visibility"], "unlisted");
      assert.equal(body["posting:default:sensitive"], true);
      assert.equal(body["posting:default:language"], "de");
      assert.deepEqual(Object.keys(body).sort(), [
        "posting:default:language",
        "posting:default:sensitive",
        "posting:default:visibility",
        "reading:autoplay:gifs",
        "reading:expand:media",
        "reading:expand:spoilers",
      ]);
    });

    test("matches the Preferences schema", { skip: openApiSkip }, async () => {
      const user = await freshUser();
      await patch(user, { form: { "source[language]": "fr" } });
      assert.deepEqual(validateSchema("Preferences", (await get(server.app, PREFERENCES, user.token)).json()), []);
      assert.deepEqual(
        validateSchema("Preferences", (await get(server.app, PREFERENCES, accounts.alice.token)).json()),
        [],
      );
    });

    test("401 without a token, 422 for an app token, 403 without read:accounts", async () => {
      assert.deepEqual(errorOf(await get(server.app, PREFERENCES)), [401, "The access token is invalid"]);
      assert.deepEqual(errorOf(await get(server.app, PREFERENCES, "nope")), [401, "The access token is invalid"]);
      assert.deepEqual(errorOf(await get(server.app, PREFERENCES, await appToken(server.ctx, "read"))), [
        422,
        "This method requires an authenticated user",
      ]);
      for (const scopes of ["write", "read:statuses", "write:accounts", "follow"]) {
        assert.deepEqual(
          errorOf(await get(server.app, PREFERENCES, await tokenFor(server.ctx, accounts.bob, scopes))),
          [403, "This action is outside the authorized scopes"],
          scopes,
        );
      }
      for (const scopes of ["read", "read:accounts"]) {
        assert.equal(
          (await get(server.app, PREFERENCES, await tokenFor(server.ctx, accounts.bob, scopes))).statusCode,
          200,
          scopes,
        );
      }
    });

    test("403 for an unconfirmed user", async () => {
      const unconfirmed = await createUser(server.ctx, "prefs_unconfirmed", { confirmed: false });
      assert.deepEqual(errorOf(await get(server.app, PREFERENCES, unconfirmed.token)), [
        403,
        "Your login is missing a confirmed e-mail address",
      ]);
    });
  });
});
