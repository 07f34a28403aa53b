/**
 * A tiny "browser" for the server-rendered pages, over Fastify's inject: it keeps the cookies the
 * server sets, follows nothing by itself, and can find a form in a page and submit it the way a
 * browser would (hidden fields and pre-filled values, plus what the test types in).
 *
 *   const browser = new Browser(server.app);
 *   const page = await browser.get("/auth/sign_in");
 *   const res = await browser.submit(page, "/auth/sign_in", { email: "alice@rookery.test", password: "…" });
 *   assert.equal(res.statusCode, 303);
 */
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from "fastify";

/** Every user the test kit creates has this password. */
export const KIT_PASSWORD = "correct horse battery staple";

/** The origin the test configuration serves (LOCAL_DOMAIN rookery.test over https). */
export const ORIGIN = "https://rookery.test";

export interface HtmlForm {
  action: string;
  method: string;
  /** What a browser would send without the user typing anything (hidden inputs, values, checked boxes, textareas). */
  fields: Record<string, string>;
  /** The names of every control in the form, filled or not. */
  names: string[];
  html: string;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

/** Decodes the character references that escaped HTML attribute values and text contain. */
export function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] === "#")
      return String.fromCodePoint(
        ref[1] === "x" || ref[1] === "X" ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10),
      );
    return ENTITIES[ref.toLowerCase()] ?? whole;
  });
}

/** The attributes of one tag (`<input type="hidden" name="a" value="b">` → {type, name, value}). */
export function attributes(tag: string): Record<string, string> {
  const result: Record<string, string> = {};
  const body = tag.replace(/^<\w+/, "").replace(/\/?>$/, "");
  for (const match of body.matchAll(/([^\s=/>]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g)) {
    result[match[1].toLowerCase()] = decodeEntities(match[2] ?? match[3] ?? match[4] ?? "");
  }
  return result;
}

/** Every form of a page, in document order. */
export function findForms(html: string): HtmlForm[] {
  const forms: HtmlForm[] = [];
  for (const match of html.matchAll(/<form\b[^>]*>[\s\S]*?<\/form>/gi)) {
    const markup = match[0];
    const attrs = attributes(/^<form\b[^>]*>/i.exec(markup)![0]);
    const fields: Record<string, string> = {};
    const names: string[] = [];
    for (const input of markup.matchAll(/<input\b[^>]*>/gi)) {
      const a = attributes(input[0]);
      if (!a.name) continue;
      names.push(a.name);
      const type = (a.type ?? "text").toLowerCase();
      if (type === "checkbox" || type === "radio") {
        if ("checked" in a) fields[a.name] = a.value || "on";
      } else if (type !== "password" && type !== "submit" && type !== "file") {
        if ("value" in a) fields[a.name] = a.value;
      }
    }
    for (const area of markup.matchAll(/<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/gi)) {
      const a = attributes(`<textarea${area[1]}>`);
      if (!a.name) continue;
      names.push(a.name);
      fields[a.name] = decodeEntities(area[2]);
    }
    for (const button of markup.matchAll(/<button\b[^>]*>/gi)) {
      const a = attributes(button[0]);
      if (a.name) names.push(a.name);
    }
    forms.push({
      action: attrs.action ?? "",
      method: (attrs.method ?? "get").toLowerCase(),
      fields,
      names,
      html: markup,
    });
  }
  return forms;
}

export type FormSelector = string | RegExp | ((form: HtmlForm) => boolean);

function matches(form: HtmlForm, selector: FormSelector): boolean {
  if (typeof selector === "string") return form.action === selector;
  if (selector instanceof RegExp) return selector.test(form.action);
  return selector(form);
}

/** The first form matching `selector` (its action, exactly or by pattern, or a predicate); throws when none does. */
export function findForm(html: string, selector: FormSelector): HtmlForm {
  const form = findForms(html).find((f) => matches(f, selector));
  if (!form) throw new Error(`no form matching ${String(selector)} in the page:\n${html}`);
  return form;
}

/** The Set-Cookie headers of a response, as a list. */
export function setCookieHeaders(res: LightMyRequestResponse): string[] {
  const header = res.headers["set-cookie"];
  return header === undefined ? [] : Array.isArray(header) ? header : [String(header)];
}

export interface SetCookie {
  name: string;
  value: string;
  /** Attribute names in lower case; flags such as `httponly` map to "". */
  attributes: Record<string, string>;
}

export function parseSetCookie(header: string): SetCookie {
  const [pair, ...rest] = header.split(";");
  const eq = pair.indexOf("=");
  const attrs: Record<string, string> = {};
  for (const part of rest) {
    const i = part.indexOf("=");
    if (i === -1) attrs[part.trim().toLowerCase()] = "";
    else attrs[part.slice(0, i).trim().toLowerCase()] = part.slice(i + 1).trim();
  }
  return { name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim(), attributes: attrs };
}

/** The cookie `name` as a response sets it, or undefined when the response does not set it. */
export function cookieSetBy(res: LightMyRequestResponse, name: string): SetCookie | undefined {
  return setCookieHeaders(res)
    .map(parseSetCookie)
    .find((c) => c.name === name);
}

/** The Location of a redirect as a URL (relative locations are resolved against the server's origin). */
export function locationOf(res: LightMyRequestResponse): URL {
  const location = res.headers.location;
  if (typeof location !== "string")
    throw new Error(`no Location header (status ${res.statusCode}): ${res.body.slice(0, 500)}`);
  return new URL(location, ORIGIN);
}

/** The text of an HTML page's alert box (`<div class="flash" role="alert">`), if any. */
export function alertOf(html: string): string | undefined {
  const match = /<div class="flash" role="alert">([\s\S]*?)<\/div>/.exec(html);
  return match ? decodeEntities(match[1].replace(/<[^>]*>/g, "")).trim() : undefined;
}

/** `application/x-www-form-urlencoded`, in the order given. */
export function encodeForm(fields: Record<string, string>): string {
  return new URLSearchParams(Object.entries(fields)).toString();
}

export interface BrowserOptions {
  /** The client address requests come from (default: inject's 127.0.0.1, which no throttle counts). */
  remoteAddress?: string;
  userAgent?: string;
}

export interface BrowserRequest {
  form?: Record<string, string>;
  headers?: Record<string, string>;
}

export class Browser {
  readonly #app: FastifyInstance;
  readonly #options: BrowserOptions;
  /** The cookie jar: name → value as the server sent it (still URL-encoded). */
  readonly cookies = new Map<string, string>();

  constructor(app: FastifyInstance, options: BrowserOptions = {}) {
    this.#app = app;
    this.#options = options;
  }

  /** One request with the jar's cookies; Set-Cookie answers update the jar. Redirects are returned, not followed. */
  async request(
    method: InjectOptions["method"],
    url: string,
    options: BrowserRequest = {},
  ): Promise<LightMyRequestResponse> {
    const target = url.startsWith(ORIGIN) ? url.slice(ORIGIN.length) || "/" : url;
    if (!target.startsWith("/")) throw new Error(`the browser only visits ${ORIGIN}, not ${url}`);
    const headers: Record<string, string> = {
      "user-agent": this.#options.userAgent ?? "TestBrowser/1.0",
      accept: "text/html",
      ...options.headers,
    };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    let payload: string | undefined;
    if (options.form) {
      headers["content-type"] = "application/x-www-form-urlencoded";
      payload = encodeForm(options.form);
    }
    const res = await this.#app.inject({
      method,
      url: target,
      headers,
      payload,
      remoteAddress: this.#options.remoteAddress,
    });
    for (const cookie of setCookieHeaders(res).map(parseSetCookie)) {
      if (cookie.value === "" || cookie.attributes["max-age"] === "0") this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    return res;
  }

  get(url: string): Promise<LightMyRequestResponse> {
    return this.request("GET", url);
  }

  post(url: string, form: Record<string, string>): Promise<LightMyRequestResponse> {
    return this.request("POST", url, { form });
  }

  /** GETs the Location of a redirect (which must be on this server). */
  follow(res: LightMyRequestResponse): Promise<LightMyRequestResponse> {
    const location = locationOf(res);
    if (location.origin !== ORIGIN) throw new Error(`refusing to follow a redirect off-site: ${location.href}`);
    return this.get(location.pathname + location.search);
  }

  /**
   * Submits a form of `page`: its pre-filled fields, overridden by `values`; names in `omit` are left
   * out (to play a tampered or stale form).
   */
  submit(
    page: LightMyRequestResponse | string,
    selector: FormSelector,
    values: Record<string, string> = {},
    omit: string[] = [],
  ): Promise<LightMyRequestResponse> {
    const form = findForm(typeof page === "string" ? page : page.body, selector);
    const fields: Record<string, string> = { ...form.fields, ...values };
    for (const name of omit) delete fields[name];
    return form.method === "post" ? this.post(form.action, fields) : this.get(`${form.action}?${encodeForm(fields)}`);
  }

  /** Signs in through the sign-in page (a kit user's password by default); returns the POST's response. */
  async signIn(email: string, password = KIT_PASSWORD, returnTo?: string): Promise<LightMyRequestResponse> {
    const page = await this.get(returnTo ? `/auth/sign_in?return_to=${encodeURIComponent(returnTo)}` : "/auth/sign_in");
    return this.submit(page, "/auth/sign_in", { email, password });
  }
}
