import { escapeHtml } from "../text/escape.ts";

/** Markup that is already safe; interpolating it into `html` does not escape it again. */
export class SafeHtml {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

type Interpolation = SafeHtml | string | number | boolean | null | undefined | readonly Interpolation[];

function render(value: Interpolation): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

/** A template tag that escapes every interpolated value unless it is SafeHtml. */
export function html(strings: TemplateStringsArray, ...values: Interpolation[]): SafeHtml {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1];
  return new SafeHtml(out);
}

/** The site's one style sheet, inlined in every page (the CSP allows no external one). */
export const STYLE = `
:root{color-scheme:light dark;--bg:#f4f5f7;--fg:#17191f;--card:#fff;--muted:#5d6475;--accent:#5562e8;--danger:#c0392b;--border:#d7dbe3}
@media (prefers-color-scheme:dark){:root{--bg:#17191f;--fg:#eceff4;--card:#22252d;--muted:#a3aab8;--border:#3a3f4b}}
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;background:var(--bg);color:var(--fg)}
main{max-width:30rem;margin:3rem auto;padding:0 1rem}.card{background:var(--card);border:1px solid var(--border);border-radius:12px;padding:1.5rem}
h1{font-size:1.4rem;margin:0 0 1rem}label{display:block;margin:.8rem 0 .3rem;font-weight:600}
input[type=text],input[type=email],input[type=password],textarea{width:100%;padding:.6rem;border:1px solid var(--border);border-radius:8px;background:var(--bg);color:var(--fg);font:inherit}
button,.button{display:inline-block;margin-top:1rem;padding:.6rem 1.2rem;border:0;border-radius:8px;background:var(--accent);color:#fff;font:inherit;font-weight:600;cursor:pointer;text-decoration:none}
.button.secondary,button.secondary{background:transparent;color:var(--fg);border:1px solid var(--border)}.button.danger,button.danger{background:var(--danger)}
.flash{padding:.7rem 1rem;border-radius:8px;margin-bottom:1rem;background:#fdecea;color:#611a15}.flash.notice{background:#e8f5e9;color:#1b5e20}
.muted{color:var(--muted);font-size:.9rem}ul.scopes{padding-left:1.2rem}code{font-size:1.1rem;word-break:break-all}
.row{display:flex;gap:.5rem;flex-wrap:wrap;align-items:center}nav{margin-top:1.5rem}nav a{margin-right:1rem;color:var(--accent)}
table{width:100%;border-collapse:collapse}td{padding:.4rem 0;border-bottom:1px solid var(--border);vertical-align:top}
.site{margin:0 0 .6rem}.card{overflow-wrap:anywhere}
@media (max-height:700px),(max-width:520px){main{margin:1rem auto}.card{padding:1rem 1.1rem}
h1{font-size:1.25rem;margin-bottom:.6rem}p{margin:.6rem 0}button,.button{margin-top:.5rem}nav{margin-top:1rem}}
@media (max-height:700px){main.popup .card{max-height:calc(100vh - 4.5rem);overflow-y:auto}
main.popup ul.scopes{max-height:30vh;overflow-y:auto;margin:.4rem 0}}
main.wide{max-width:72rem}main.wide .card{padding:1.5rem 2rem}th{text-align:left;padding:.4rem .6rem .4rem 0;border-bottom:2px solid var(--border);overflow-wrap:normal}
main.wide td{padding:.4rem .6rem .4rem 0}select{padding:.5rem;border:1px solid var(--border);border-radius:8px;background:var(--bg);color:var(--fg);font:inherit}
nav.sections{margin:0 0 1.2rem;display:flex;flex-wrap:wrap;gap:.3rem 1rem}nav.sections a[aria-current=page]{font-weight:700;text-decoration:none}
.badge{display:inline-block;padding:0 .4rem;border-radius:6px;border:1px solid var(--border);font-size:.85rem}
form.inline{display:inline}form.inline button{margin-top:.3rem}
.row.filters{align-items:flex-end}label.inline{display:inline}label.plain{font-weight:normal}.nowrap{white-space:nowrap}
col.labels{width:14rem}article.card{margin:.8rem 0}
`;

export interface PageOptions {
  title: string;
  siteTitle: string;
  body: SafeHtml;
  alert?: string;
  notice?: string;
  /**
   * Shown in an app's small pop-up window (the OAuth consent page): on a short window the card
   * stays whole within the viewport and its content scrolls instead.
   */
  popup?: boolean;
  /** A page of tables (the admin area): a wider column. */
  wide?: boolean;
}

/** "Page – Site", or only the site's name when the page is the site's own (its home page). */
export function documentTitle(title: string, siteTitle: string): string {
  return title === siteTitle || siteTitle === "" ? title : `${title} – ${siteTitle}`;
}

/** The one page layout: no scripts, no external assets, usable without JavaScript. */
export function page(options: PageOptions): string {
  const main = options.popup ? html`<main class="popup">` : options.wide ? html`<main class="wide">` : html`<main>`;
  // The home page's title is the site's name: no need to show it twice.
  const site = options.title === options.siteTitle ? "" : html`<p class="muted site">${options.siteTitle}</p>`;
  return html`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin"><title>${documentTitle(options.title, options.siteTitle)}</title>
<link rel="icon" href="/favicon.ico"><style>${new SafeHtml(STYLE)}</style></head>
<body>${main}${site}<div class="card"><h1>${options.title}</h1>
${options.alert ? html`<div class="flash" role="alert">${options.alert}</div>` : ""}${options.notice ? html`<div class="flash notice" role="status">${options.notice}</div>` : ""}
${options.body}</div></main></body></html>`.value;
}

/** Plain text as paragraphs (at blank lines) with its line breaks kept, everything escaped. */
export function paragraphs(text: string): SafeHtml {
  const blocks = text
    .replace(/\r\n?/g, "\n")
    .trim()
    .split(/\n\s*\n/);
  return html`${blocks.map((block) => html`<p>${block.split("\n").map((line, i) => html`${i > 0 ? html`<br>` : ""}${line}`)}</p>`)}`;
}

/** Hidden inputs (CSRF token and carried parameters) for a form. */
export function hiddenFields(fields: Record<string, string | undefined>): SafeHtml {
  return html`${Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}`;
}
