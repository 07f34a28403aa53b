import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { parseDocument } from "htmlparser2";
import { formatText } from "../src/services/text/format.ts";
import { linkHtml } from "../src/text/format.ts";
import { htmlToPlainText, isAllowedHref, MAX_INPUT_LENGTH, MAX_NESTING, sanitizeHtml } from "../src/text/sanitize.ts";
import { createRemoteAccount, createTestServer, createUser, type TestServer } from "./kit.ts";

const A = 'rel="nofollow noopener" target="_blank"';
const OK = `<a href="https://ok.example/" ${A}>`;

type ChildNode = ReturnType<typeof parseDocument>["children"][number];

/** The elements and attributes MASTODON_STRICT lets through, for the structural checks. */
const ELEMENTS = new Set([
  "p",
  "br",
  "span",
  "a",
  "del",
  "s",
  "pre",
  "blockquote",
  "code",
  "b",
  "strong",
  "u",
  "i",
  "em",
  "ul",
  "ol",
  "li",
  "ruby",
  "rt",
  "rp",
]);
const ATTRIBUTES: Record<string, string[]> = {
  a: ["href", "rel", "class", "translate", "target"],
  span: ["class", "translate"],
  ol: ["start", "reversed"],
  li: ["value"],
  p: ["class"],
};

/** Parses sanitized output again and fails on anything MASTODON_STRICT would not let through. */
function assertStrict(html: string, input: string): void {
  const visit = (nodes: ChildNode[]) => {
    for (const node of nodes) {
      if (node.type === "comment" || node.type === "directive" || node.type === "cdata")
        assert.fail(`${node.type} in ${JSON.stringify(html)} from ${JSON.stringify(input)}`);
      if (node.type !== "tag" && node.type !== "script" && node.type !== "style") continue;
      assert.ok(ELEMENTS.has(node.name), `<${node.name}> in ${JSON.stringify(html)} from ${JSON.stringify(input)}`);
      for (const name of Object.keys(node.attribs)) {
        assert.ok(
          name === "lang" || ATTRIBUTES[node.name]?.includes(name),
          `${node.name}[${name}] in ${JSON.stringify(html)}`,
        );
      }
      if (node.name === "a") {
        assert.ok(isAllowedHref(node.attribs.href), `href ${node.attribs.href}`);
        assert.match(node.attribs.href, /^[ \t\r\n\f\v]*(?:https?|dat|dweb|ipfs|ipns|ssb|gopher|xmpp|magnet|gemini):/i);
        assert.equal(node.attribs.rel, "nofollow noopener");
        assert.equal(node.attribs.target, "_blank");
      }
      visit(node.children);
    }
  };
  visit(parseDocument(html).children);
  assert.equal(sanitizeHtml(html), html, `sanitizing ${JSON.stringify(html)} again changes it`);
}

function assertSanitizes(cases: ReadonlyArray<readonly [string, string]>): void {
  for (const [input, expected] of cases) {
    const output = sanitizeHtml(input);
    assert.equal(output, expected, `sanitizeHtml(${JSON.stringify(input)})`);
    assertStrict(output, input);
  }
}

describe("sanitizeHtml: script and event vectors", () => {
  test("scripts, styles and embedded documents vanish with their content", () => {
    assertSanitizes([
      ["<script>alert(1)</script>", ""],
      ["<p>hi<script>alert(1)</script></p>", "<p>hi</p>"],
      ["<SCRIPT SRC=//evil.example/x.js></SCRIPT>after", "after"],
      ["<script>document.write('<p>x</p>')</script>", ""],
      ["<style>body{background:url(javascript:alert(1))}</style>text", "text"],
      ['<iframe src="javascript:alert(1)">inner</iframe>', ""],
      ['<iframe srcdoc="<script>alert(1)</script>"></iframe>ok', "ok"],
      ['<object data="x.swf"><param name="a" value="b">fallback</object>', ""],
      ["<embed src=x.swf>", ""],
      ["<applet code=x>fallback</applet>", ""],
      ["<template><script>alert(1)</script>hidden</template>shown", "shown"],
      ["<noembed>x</noembed><noframes>y</noframes>z", "z"],
      ["<title>t</title>body", "body"],
      ['<a href="https://ok.example/"><script>alert(1)</script>x</a>', `${OK}x</a>`],
      ['<a href="javascript:alert(1)"><script>alert(1)</script>x</a>', "x"],
    ]);
  });

  test("event handlers, styles and unknown attributes are removed", () => {
    assertSanitizes([
      ["<img src=x onerror=alert(1)>", ""],
      ["<img src=x onerror=alert(1)>after", "after"],
      ['<p onclick="alert(1)" style="color:red" id="x" title="t">x</p>', "<p>x</p>"],
      ['<b onmouseover="alert(1)">x</b>', "<b>x</b>"],
      ["<body onload=alert(1)>x</body>", "x"],
      ["<input onfocus=alert(1) autofocus>", ""],
      ["<details open ontoggle=alert(1)>x</details>", "x"],
      ["<video><source onerror=alert(1)>fallback</video>", "fallback"],
      ['<form><button formaction="javascript:alert(1)">x</button></form>', "x"],
      ['<base href="javascript:/">', ""],
      ['<meta http-equiv="refresh" content="0;url=javascript:alert(1)">', ""],
      ["<link rel=stylesheet href=//evil.example/x.css>", ""],
      ['<span style="background:url(javascript:alert(1))" class="h-card">x</span>', '<span class="h-card">x</span>'],
      [
        '<a href="https://ok.example/" onmouseover="alert(1)" style="x" target="_top">y</a>',
        `<a href="https://ok.example/" target="_blank" rel="nofollow noopener">y</a>`,
      ],
    ]);
  });

  test("svg and MathML without an annotation are dropped whole", () => {
    assertSanitizes([
      ["<svg onload=alert(1)><script>alert(1)</script></svg>after", "after"],
      ['<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>', ""],
      ["<svg><p>inside</p></svg>after", "after"],
      ["<svg><style><img src=x onerror=alert(1)></style></svg>", ""],
      ["<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>", ""],
      ['<math><maction actiontype="statusline" xlink:href="javascript:alert(1)">x</maction></math>', ""],
    ]);
  });

  test("links with scripts, data, relative or obfuscated schemes become their text", () => {
    assertSanitizes([
      ['<a href="javascript:alert(1)">click</a>', "click"],
      ['<a href="JaVaScRiPt:alert(1)">click</a>', "click"],
      ['<a href="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)">click</a>', "click"],
      ['<a href="&#x6A;avascript&#x3A;alert(1)">click</a>', "click"],
      ['<a href="javascript&colon;alert(1)">click</a>', "click"],
      ['<a href="java&#9;script:alert(1)">click</a>', "click"],
      ['<a href="jav&#x0A;ascript:alert(1)">click</a>', "click"],
      ['<a href=" &#14; javascript:alert(1)">click</a>', "click"],
      ['<a href="\u0001javascript:alert(1)">click</a>', "click"],
      ['<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">click</a>', "click"],
      ['<a href="vbscript:msgbox(1)">click</a>', "click"],
      ['<a href="file:///etc/passwd">click</a>', "click"],
      ['<a href="/relative/path">click</a>', "click"],
      ['<a href="//evil.example/">click</a>', "click"],
      ['<a href="#top">click</a>', "click"],
      ["<a href>click</a>", "click"],
      ['<a name="x">click</a>', "click"],
      [
        '<a href="javascript:alert(1)"><b>bold</b> <span class="invisible">https://</span>x<br>y</a>',
        "bold https://xy",
      ],
      ['<a href="javascript:alert(1)">a &lt;b&gt; &amp; c</a>', "a &lt;b&gt; &amp; c"],
    ]);
  });

  test("every allowed scheme keeps its link, whatever its case or leading space", () => {
    for (const scheme of [
      "http",
      "https",
      "dat",
      "dweb",
      "ipfs",
      "ipns",
      "ssb",
      "gopher",
      "xmpp",
      "magnet",
      "gemini",
      "HTTPS",
    ]) {
      const href = `${scheme}:${scheme === "xmpp" || scheme === "magnet" ? "" : "//"}x.example/p`;
      assert.equal(sanitizeHtml(`<a href="${href}">x</a>`), `<a href="${href}" ${A}>x</a>`, scheme);
    }
    assert.equal(sanitizeHtml('<a href=" https://x.example/">x</a>'), `<a href=" https://x.example/" ${A}>x</a>`);
  });

  test("quotes and brackets in text and attribute values stay escaped", () => {
    assertSanitizes([
      [`<p title='"><script>alert(1)</script>'>x</p>`, "<p>x</p>"],
      [`<a href="https://ok.example/" title='"><script>alert(1)</script>'>x</a>`, `${OK}x</a>`],
      [
        `<a href='https://ok.example/?q="><script>'>x</a>`,
        `<a href="https://ok.example/?q=&quot;&gt;&lt;script&gt;" ${A}>x</a>`,
      ],
      [`<span lang='en" onmouseover="alert(1)'>x</span>`, `<span lang="en&quot; onmouseover=&quot;alert(1)">x</span>`],
      ["&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;script&gt;alert(1)&lt;/script&gt;"],
      ["&amp;lt;script&amp;gt;", "&amp;lt;script&amp;gt;"],
      ["&#60;script&#62;alert(1)&#x3C;/script&#x3E;", "&lt;script&gt;alert(1)&lt;/script&gt;"],
      ["a < b > c & d \" e ' f", "a &lt; b &gt; c &amp; d &quot; e &#39; f"],
      ["<<script>alert(1)//<</script>", "&lt;"],
      ["<scr<script>ipt>alert(1)</script>", "ipt&gt;alert(1)"],
      ['<xmp><p title="</xmp><img src=x onerror=alert(1)>">', "&quot;&gt;"],
      ['<noscript><p title="</noscript><img src=x onerror=alert(1)>">', ""],
      ["<textarea><script>alert(1)</script></textarea>", "&lt;script&gt;alert(1)&lt;/script&gt;"],
      ["<p>a\u0000b</p>", "<p>a\uFFFDb</p>"],
    ]);
  });

  test("comments, doctypes, CDATA and processing instructions are dropped", () => {
    assertSanitizes([
      ["<!-- c -->text", "text"],
      ["<!--<script>alert(1)</script>-->", ""],
      ["<!--[if IE]><script>alert(1)</script><![endif]-->x", "x"],
      ["<!DOCTYPE html><p>x</p>", "<p>x</p>"],
      ["<![CDATA[<script>alert(1)</script>]]>x", "x"],
      ['<?xml version="1.0"?>x', "x"],
    ]);
  });

  test("broken markup is closed, and stray end tags do nothing", () => {
    assertSanitizes([
      ["<b><i>unclosed", "<b><i>unclosed</i></b>"],
      ["</b>stray</i>", "stray"],
      ["<p>x</p></p>", "<p>x</p><p></p>"],
      ["<p>x</br>y", "<p>x<br />y</p>"],
      ["<b>a<i>b</b>c</i>", "<b>a<i>b</i></b>c"],
      ['<b class="x', ""],
      ['<a href="https://ok.example/', ""],
      ["<p>a<p>b", "<p>a</p><p>b</p>"],
      [
        '<a href="https://a.example/">one<a href="https://b.example/">two</a>',
        `<a href="https://a.example/" ${A}>one</a><a href="https://b.example/" ${A}>two</a>`,
      ],
    ]);
  });
});

describe("sanitizeHtml: elements and attributes", () => {
  test("each allowed element is kept with lang, and loses other attributes", () => {
    for (const name of [
      "p",
      "span",
      "del",
      "s",
      "pre",
      "blockquote",
      "code",
      "b",
      "strong",
      "u",
      "i",
      "em",
      "ul",
      "ol",
      "li",
      "ruby",
      "rt",
      "rp",
    ]) {
      assert.equal(
        sanitizeHtml(`<${name} lang="de" id="x" data-x="1" dir="rtl">x</${name}>`),
        `<${name} lang="de">x</${name}>`,
        name,
      );
    }
    assert.equal(
      sanitizeHtml('<a href="https://ok.example/" lang="de" id="x">x</a>'),
      `<a href="https://ok.example/" lang="de" ${A}>x</a>`,
    );
    assert.equal(sanitizeHtml('a<br lang="de" class="mention">b<br/>c<br />d'), 'a<br lang="de" />b<br />c<br />d');
    assert.equal(
      sanitizeHtml("<ruby>漢<rp>(</rp><rt>kan</rt><rp>)</rp></ruby>"),
      "<ruby>漢<rp>(</rp><rt>kan</rt><rp>)</rp></ruby>",
    );
  });

  test("other elements are unwrapped; block ones leave spaces so words stay apart", () => {
    assertSanitizes([
      ["<div>a</div><div>b</div>", " a  b "],
      ["a<hr>b", "a b"],
      ["<section><article><header>h</header>x</article></section>", "   h x  "],
      ["<dl><dt>t</dt><dd>d</dd></dl>", "  t  d  "],
      ["<div></div>x", " x"],
      ["<table><tr><td>a</td><td>b</td></tr></table>", "ab"],
      [
        "x<sup>2</sup> <small>s</small> <mark>m</mark> <abbr title='t'>a</abbr> <q>q</q> <font color=red>f</font>",
        "x2 s m a q f",
      ],
      ["<p>a <img src=x alt=picture> b</p>", "<p>a  b</p>"],
      ["<video src=v.mp4>fallback</video>", "fallback"],
      ["<select><option>one</option></select>", "one"],
      ['<div class="mention" lang="en"><b>x</b></div>', " <b>x</b> "],
    ]);
  });

  test("headings become a strong paragraph", () => {
    for (const level of [1, 2, 3, 4, 5, 6]) {
      assert.equal(
        sanitizeHtml(`<h${level} class="p-name" id="x">Title</h${level}>`),
        "<p><strong>Title</strong></p>",
        `h${level}`,
      );
    }
    assertSanitizes([
      ['<h2 lang="en">T <em>e</em></h2><p>body</p>', '<p><strong lang="en">T <em>e</em></strong></p><p>body</p>'],
      ["<p>x<h2>y</h2>z</p>", "<p>x</p><p><strong>y</strong></p>z<p></p>"],
      ['<a href="javascript:x"><h1>T</h1></a>', "T"],
    ]);
  });

  test("class keeps microformats and Mastodon's own classes only", () => {
    assertSanitizes([
      [
        '<span class="h-card p-name u-url dt-published e-content mention hashtag ellipsis invisible quote-inline">x</span>',
        '<span class="h-card p-name u-url dt-published e-content mention hashtag ellipsis invisible quote-inline">x</span>',
      ],
      ['<span class="foo h-card  bar\tmention\nx-y">x</span>', '<span class="h-card mention">x</span>'],
      ['<span class="h mentions hashtagx my-invisible hh-card ph-x">x</span>', '<span class="">x</span>'],
      ['<span class="">x</span>', '<span class="">x</span>'],
      ['<p class="quote-inline">RE: x</p><p class="lead">y</p>', '<p class="quote-inline">RE: x</p><p class="">y</p>'],
      [
        '<a href="https://ok.example/" class="u-url mention status-link">x</a>',
        `<a href="https://ok.example/" class="u-url mention" ${A}>x</a>`,
      ],
      ['<b class="mention">x</b><blockquote class="h-entry">y</blockquote>', "<b>x</b><blockquote>y</blockquote>"],
    ]);
  });

  test('translate survives only as "no"', () => {
    assertSanitizes([
      [
        '<span translate="no">a</span><span translate="yes">b</span><span translate="NO">c</span><span translate>d</span>',
        '<span translate="no">a</span><span>b</span><span>c</span><span>d</span>',
      ],
      ['<a href="https://ok.example/" translate="no">x</a>', `<a href="https://ok.example/" translate="no" ${A}>x</a>`],
      ['<p translate="no">x</p>', "<p>x</p>"],
    ]);
  });

  test("links always get rel and target, replacing what they had", () => {
    assertSanitizes([
      ['<a href="https://ok.example/">x</a>', `${OK}x</a>`],
      [
        '<a href="https://ok.example/" rel="tag me">x</a>',
        `<a href="https://ok.example/" rel="nofollow noopener" target="_blank">x</a>`,
      ],
      [
        '<a target="_self" href="https://ok.example/" rel="opener">x</a>',
        `<a target="_blank" href="https://ok.example/" rel="nofollow noopener">x</a>`,
      ],
    ]);
  });

  test("lists keep start, reversed and value, and close their items", () => {
    assertSanitizes([
      [
        '<ol start="3" reversed type="a"><li value="5" class="x">a</li><li>b</ol>',
        '<ol start="3" reversed=""><li value="5">a</li><li>b</li></ol>',
      ],
      ["<ul><li>a<li>b</ul>", "<ul><li>a</li><li>b</li></ul>"],
      ['<ul type="disc" start="2"><li>a</li></ul>', "<ul><li>a</li></ul>"],
      ["<ol><li><ul><li>nested</li></ul></li></ol>", "<ol><li><ul><li>nested</li></ul></li></ol>"],
    ]);
  });

  test("math becomes its TeX annotation, or else its plain-text one", () => {
    const tex = (body: string, attrs = "") =>
      `<math${attrs}><semantics><mrow><msup><mi>x</mi><mn>2</mn></msup></mrow>${body}</semantics></math>`;
    assertSanitizes([
      [`a ${tex('<annotation encoding="application/x-tex">x^2</annotation>')} b`, "a $x^2$ b"],
      [tex('<annotation encoding="application/x-tex">x^2</annotation>', ' display="block"'), "$$x^2$$"],
      [tex('<annotation encoding="application/x-tex">x^2</annotation>', ' display="inline"'), "$x^2$"],
      [
        tex(
          '<annotation encoding="text/plain">x squared</annotation><annotation encoding="application/x-tex">x^2</annotation>',
        ),
        "$x^2$",
      ],
      [tex('<annotation encoding="text/plain">x squared</annotation>', ' display="block"'), "x squared"],
      [
        tex('<annotation encoding="application/x-tex">a &lt; b &amp; <script>c</script></annotation>'),
        "$a &lt; b &amp; c$",
      ],
      [tex('<annotation encoding="application/x-tex"><![CDATA[a<b]]></annotation>'), "$a&lt;b$"],
      [tex('<annotation encoding="text/html">x</annotation>'), ""],
      [tex(""), ""],
      ['<math><mi>x</mi><semantics><annotation encoding="application/x-tex">x</annotation></semantics></math>', ""],
      ['<math><semantics><mrow><annotation encoding="application/x-tex">x</annotation></mrow></semantics></math>', ""],
      ["<math><mi>x</mi></math>after", "after"],
      [`<p>${tex('<annotation encoding="application/x-tex">x^2</annotation>')}</p>`, "<p>$x^2$</p>"],
    ]);
  });

  test("text inside pre keeps its whitespace and line breaks", () => {
    assertSanitizes([
      [
        "<pre><code>  if (a &lt; b) {\n    x();\n  }</code></pre>",
        "<pre><code>  if (a &lt; b) {\n    x();\n  }</code></pre>",
      ],
    ]);
  });
});

describe("sanitizeHtml: Mastodon's own markup passes through", () => {
  const mention =
    '<span class="h-card" translate="no"><a href="https://remote.example/@rita" class="u-url mention">@<span>rita</span></a></span>';
  const hashtag =
    '<a href="https://remote.example/tags/Caturday" class="mention hashtag" rel="tag">#<span>Caturday</span></a>';

  test("links from the formatter are unchanged, short and long", () => {
    for (const url of [
      "https://example.com/",
      "https://www.example.com/a/very/long/path/that/goes/on?q=1&r='x'",
      "http://example.com/exactly/thirty-one-chars/xyz",
      "xmpp:someone@example.org",
      "gemini://example.org/",
    ]) {
      const html = `<p>see ${linkHtml(url)} now</p>`;
      assert.equal(sanitizeHtml(html), html, url);
    }
  });

  test("mentions and hashtags keep their markup and gain only rel and target", () => {
    assert.equal(sanitizeHtml(mention), mention.replace('class="u-url mention">', `class="u-url mention" ${A}>`));
    assert.equal(sanitizeHtml(hashtag), hashtag.replace('rel="tag">', `${A}>`));
  });

  test("paragraphs, line breaks and quote lines are unchanged", () => {
    for (const html of [
      "<p>a<br />b</p><p>c</p>",
      `<p class="quote-inline">RE: ${linkHtml("https://remote.example/@rita/1")}</p><p>x</p>`,
      `<p>${mention} hi</p>`,
    ]) {
      const expected = html.replaceAll('class="u-url mention">', `class="u-url mention" ${A}>`);
      assert.equal(sanitizeHtml(html), expected);
    }
  });

  describe("what formatText writes", () => {
    let server: TestServer;
    before(async () => {
      server = await createTestServer();
      await createUser(server.ctx, "alice");
      await createRemoteAccount(server.ctx, "rita", "remote.example");
      await createRemoteAccount(server.ctx, "alice", "remote.example");
    });
    after(() => server.close());

    test("survives sanitizing with only rel and target added to mentions and hashtags", async () => {
      const text =
        "Hi @alice and @rita@remote.example and @alice@remote.example!\nSee https://example.com/a/very/long/path/that/goes/on?x=1&y=<2> #Caturday #ドラゴン\n\n'quoted' \"text\" & <b>not bold</b>";
      const { html } = await formatText(server.ctx, text, { multiline: true });
      assert.match(html, /class="u-url mention"/);
      assert.match(html, /rel="tag"/);
      const expected = html
        .replaceAll('class="u-url mention">', `class="u-url mention" ${A}>`)
        .replaceAll('rel="tag">', `${A}>`);
      assert.equal(sanitizeHtml(html), expected);
      assertStrict(expected, html);
    });
  });
});

describe("sanitizeHtml: size guards", () => {
  test("nesting deeper than the limit is cut off, and the rest of the input with it", () => {
    const html = `${"<b>".repeat(MAX_NESTING + 10)}deep</b>after`;
    const output = sanitizeHtml(html);
    assert.equal(output, `${"<b>".repeat(MAX_NESTING)}${"</b>".repeat(MAX_NESTING)}`);
    const within = `${"<i>".repeat(MAX_NESTING - 1)}ok${"</i>".repeat(MAX_NESTING - 1)}`;
    assert.equal(sanitizeHtml(within), within);
  });

  test("pathological nesting is handled without recursion or quadratic work", { timeout: 20_000 }, () => {
    const n = 200_000;
    assert.equal(
      sanitizeHtml(`${"<span>".repeat(n)}${"</div>".repeat(n)}`),
      `${"<span>".repeat(MAX_NESTING)}${"</span>".repeat(MAX_NESTING)}`,
    );
    // A space opens each unwrapped <div> and closes each that has a child: all but the innermost.
    assert.equal(sanitizeHtml(`${"<div>".repeat(n)}x`), " ".repeat(2 * MAX_NESTING - 1));
    assert.equal(htmlToPlainText(`${"<blockquote>".repeat(n)}x`), "");
  });

  test("input beyond the length limit is cut", () => {
    assert.equal(sanitizeHtml("a".repeat(MAX_INPUT_LENGTH + 100)).length, MAX_INPUT_LENGTH);
    assert.equal(sanitizeHtml(`<p>${"&amp;".repeat(MAX_INPUT_LENGTH / 5)}tail</p>`).endsWith("tail</p>"), false);
  });
});

describe("sanitizeHtml: generated input", () => {
  test("random tag soup never yields more than MASTODON_STRICT allows", () => {
    const pieces = [
      "<",
      ">",
      "</",
      "/>",
      "a",
      "p",
      "b",
      "script",
      "svg",
      "math",
      "style",
      "img",
      "span",
      "h1",
      "ol",
      "li",
      "br",
      "noscript",
      "xmp",
      "textarea",
      "annotation",
      "semantics",
      " ",
      '"',
      "'",
      "=",
      "href",
      "class",
      "onerror",
      "alert(1)",
      "javascript:",
      "https://x.example/",
      "&#106;",
      "&amp;",
      "&lt;",
      "&",
      "#",
      "!--",
      "-->",
      "<![CDATA[",
      "]]>",
      "\t",
      "\n",
      "mention",
      "h-card",
      "translate",
      "no",
      "lang",
    ];
    let seed = 20240601;
    const random = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let round = 0; round < 3000; round++) {
      let input = "";
      const length = 1 + Math.floor(random() * 40);
      for (let i = 0; i < length; i++) input += pieces[Math.floor(random() * pieces.length)];
      assertStrict(sanitizeHtml(input), input);
      htmlToPlainText(input);
    }
  });
});

describe("htmlToPlainText", () => {
  test("paragraphs become blank lines and <br> newlines, with entities decoded", () => {
    assert.equal(htmlToPlainText("<p>a<br />b</p><p>c &amp; d &lt;e&gt; &#39;f&#39;</p>"), "a\nb\n\nc & d <e> 'f'");
    assert.equal(htmlToPlainText("<p>a<br><br>b</p>"), "a\n\nb");
    assert.equal(htmlToPlainText("<p>a<br></p><p>b</p>"), "a\n\nb");
    assert.equal(htmlToPlainText("<p><br>a</p><p></p><p>b<br></p>"), "a\n\nb");
    assert.equal(htmlToPlainText(""), "");
    assert.equal(htmlToPlainText("plain &amp; simple"), "plain & simple");
  });

  test("links read as their full URL; mentions and hashtags as written", () => {
    const html = `<p>see ${linkHtml("https://www.example.com/a/very/long/path/that/goes/on")} <span class="h-card"><a href="https://remote.example/@rita" class="u-url mention">@<span>rita</span></a></span> <a href="https://x.example/tags/Cat" class="mention hashtag" rel="tag">#<span>Cat</span></a></p>`;
    assert.equal(htmlToPlainText(html), "see https://www.example.com/a/very/long/path/that/goes/on @rita #Cat");
  });

  test("lists, quotes, headings and code are laid out in lines", () => {
    assert.equal(
      htmlToPlainText("<h1>Title</h1><ul><li>a</li><li>b</li></ul><blockquote><p>q</p></blockquote><pre>x\n  y</pre>"),
      "Title\n\na\nb\n\nq\n\nx\n  y",
    );
  });

  test("what the sanitizer drops is not text", () => {
    assert.equal(
      htmlToPlainText("<p>a<script>alert(1)</script><style>p{}</style><!-- c --></p><svg><text>s</text></svg>"),
      "a",
    );
    assert.equal(
      htmlToPlainText('<math><semantics><annotation encoding="application/x-tex">x^2</annotation></semantics></math>'),
      "$x^2$",
    );
  });
});
