/**
 * Jinja2's HTML and URL filters: `striptags`, `urlize`, `urlencode` and `xmlattr` (escaping itself is in
 * markup.ts).
 */

import { valueError } from "../python/errors.js";
import { lazyRegExp } from "../python/lazy-regexp.js";
import { escapeHtml, Markup } from "../python/markup.js";
import { iterate } from "../python/ops.js";
import { codePoints, cpLength, pySplit, strRepr } from "../python/string.js";
import { isUndefined } from "../python/undefined.js";
import { isDict, isStr, pyStr } from "../python/values.js";

/** The named character references most text uses; others are left as they are. */
const ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: "\xa0",
  copy: "©",
  reg: "®",
  trade: "™",
  hellip: "…",
  mdash: "—",
  ndash: "–",
  lsquo: "‘",
  rsquo: "’",
  ldquo: "“",
  rdquo: "”",
  laquo: "«",
  raquo: "»",
  middot: "·",
  bull: "•",
  deg: "°",
  times: "×",
  divide: "÷",
  euro: "€",
  pound: "£",
  yen: "¥",
  cent: "¢",
  sect: "§",
  para: "¶",
};

/** Named references HTML also accepts without the `;` (`&amp` in old markup). */
const LEGACY_RE =
  /^(amp|lt|gt|quot|nbsp|copy|reg|deg|times|divide|para|sect|cent|pound|yen|middot|laquo|raquo)/;

/** Python's `html.unescape` for numeric references and the common named ones. */
function unescapeHtml(s: string): string {
  return s.replace(/&(#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[a-zA-Z][a-zA-Z0-9]*;?)/g, (whole, ref: string) => {
    if (!ref.startsWith("#") && !ref.endsWith(";")) {
      const legacy = LEGACY_RE.exec(ref)?.[1];
      return legacy === undefined ? whole : (ENTITIES[legacy] ?? "") + ref.slice(legacy.length);
    }
    if (ref.startsWith("#")) {
      const hex = ref[1] === "x" || ref[1] === "X";
      const code = Number.parseInt(ref.slice(hex ? 2 : 1).replace(";", ""), hex ? 16 : 10);
      if (code === 0 || (code >= 0xd800 && code <= 0xdfff) || code > 0x10ffff) return "\ufffd";
      return String.fromCodePoint(code);
    }
    return ENTITIES[ref.slice(0, -1)] ?? whole;
  });
}

/** markupsafe's `Markup.striptags()`: drop comments and tags, collapse whitespace, unescape entities. */
export function striptags(value: unknown): string {
  let s = pyStr(value);
  for (let start = s.indexOf("<!--"); start !== -1; start = s.indexOf("<!--")) {
    const end = s.indexOf("-->", start);
    if (end === -1) break;
    s = s.slice(0, start) + s.slice(end + 3);
  }
  for (let start = s.indexOf("<"); start !== -1; start = s.indexOf("<")) {
    const end = s.indexOf(">", start);
    if (end === -1) break;
    s = s.slice(0, start) + s.slice(end + 1);
  }
  return unescapeHtml(pySplit(s).join(" "));
}

/** Python's `urllib.parse.quote` of the UTF-8 bytes; `safe` characters besides `A-Za-z0-9_.-~`. */
function quote(s: string, safe: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(s)) {
    const ch = String.fromCharCode(byte);
    out +=
      /[A-Za-z0-9_.\-~]/.test(ch) || safe.includes(ch)
        ? ch
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

function quoteForQuery(value: unknown): string {
  return quote(pyStr(value), "").replaceAll("%20", "+");
}

/** `urlencode`: a string is quoted as a URL path; a dict or a list of pairs becomes a query string. */
export function urlencode(value: unknown): string {
  if (isStr(value) || !(Array.isArray(value) || isDict(value))) return quote(pyStr(value), "/");
  const pairs = isDict(value) ? Object.entries(value) : iterate(value).map((p) => iterate(p));
  return pairs.map(([k, v]) => `${quoteForQuery(k)}=${quoteForQuery(v)}`).join("&");
}

/** `xmlattr`: ` key="value"` pairs, escaped, skipping None and undefined values. */
export function xmlattr(value: unknown, autospace: boolean): Markup {
  if (!isDict(value)) throw new TypeError("xmlattr requires a mapping");
  const items: string[] = [];
  for (const [key, v] of Object.entries(value)) {
    if (v === null || v === undefined || isUndefined(v)) continue;
    if (/[\s/>=]/.test(key)) throw valueError(`Invalid character in attribute name: ${strRepr(key)}`);
    items.push(`${escapeHtml(key)}="${escapeHtml(v)}"`);
  }
  const rv = items.join(" ");
  return new Markup(autospace && rv ? ` ${rv}` : rv);
}

const HTTP_RE = lazyRegExp(
  () =>
    new RegExp(
      "^(?:(?:https?://|www\\.)(?:(?:[\\p{L}\\p{N}_%-]+\\.)+)?(?:[a-z]{2,63}|xn--[\\p{L}\\p{N}_%]{2,59})" +
        "|(?:[\\p{L}\\p{N}_%-]{2,63}\\.)+(?:com|net|int|edu|gov|org|info|mil)" +
        "|https?://(?:\\d{1,3}(?:\\.\\d{1,3}){3}|\\[(?:[\\da-f]{0,4}:){2}(?:[\\da-f]{0,4}:?){1,6}\\]))" +
        "(?::\\d{1,5})?(?:[/?#]\\S*)?$",
      "iu",
    ),
);
const EMAIL_RE = lazyRegExp(() => /^\S+@[\p{L}\p{N}_][\p{L}\p{N}_.-]*\.[\p{L}\p{N}_]+$/u);

export interface UrlizeOptions {
  trimUrlLimit: number | null;
  rel: string;
  target: string | null;
  extraSchemes: string[];
}

function count(s: string, sub: string): number {
  return s.split(sub).length - 1;
}

/** Jinja2's `urlize`: links URLs and e-mail addresses in (escaped) text. */
export function urlize(text: string, opts: UrlizeOptions): string {
  const trim = (x: string): string =>
    opts.trimUrlLimit !== null && cpLength(x) > opts.trimUrlLimit
      ? `${codePoints(x).slice(0, opts.trimUrlLimit).join("")}...`
      : x;
  const relAttr = opts.rel ? ` rel="${escapeHtml(opts.rel)}"` : "";
  const targetAttr = opts.target ? ` target="${escapeHtml(opts.target)}"` : "";
  const words = escapeHtml(text).toString().split(/(\s+)/u);
  return words
    .map((word) => {
      let middle = word;
      let head = "";
      let tail = "";
      const lead = /^(?:[(<]|&lt;)+/.exec(middle);
      if (lead) {
        head = lead[0];
        middle = middle.slice(head.length);
      }
      const trail = /(?:[)>.,\n]|&gt;)+$/.exec(middle);
      if (trail) {
        tail = trail[0];
        middle = middle.slice(0, trail.index);
      }
      for (const [open, close] of [
        ["(", ")"],
        ["<", ">"],
        ["&lt;", "&gt;"],
      ] as const) {
        const opens = count(middle, open);
        if (opens <= count(middle, close)) continue;
        for (let n = Math.min(opens, count(tail, close)); n > 0; n--) {
          const end = tail.indexOf(close) + close.length;
          middle += tail.slice(0, end);
          tail = tail.slice(end);
        }
      }
      if (HTTP_RE().test(middle)) {
        const href =
          middle.startsWith("https://") || middle.startsWith("http://") ? middle : `https://${middle}`;
        middle = `<a href="${href}"${relAttr}${targetAttr}>${trim(middle)}</a>`;
      } else if (middle.startsWith("mailto:") && EMAIL_RE().test(middle.slice(7))) {
        middle = `<a href="${middle}">${middle.slice(7)}</a>`;
      } else if (
        middle.includes("@") &&
        !middle.startsWith("www.") &&
        !middle.includes(":") &&
        EMAIL_RE().test(middle)
      ) {
        middle = `<a href="mailto:${middle}">${middle}</a>`;
      } else {
        for (const scheme of opts.extraSchemes) {
          if (middle !== scheme && middle.startsWith(scheme))
            middle = `<a href="${middle}"${relAttr}${targetAttr}>${middle}</a>`;
        }
      }
      return head + middle + tail;
    })
    .join("");
}

/** `urlize`'s `rel`: the given words plus `nofollow` when asked, plus Jinja2's default `noopener`, sorted. */
export function urlizeRel(rel: unknown, nofollow: boolean): string {
  const parts = new Set(pySplit(rel === null || rel === undefined ? "" : pyStr(rel)));
  if (nofollow) parts.add("nofollow");
  parts.add("noopener");
  return [...parts].sort().join(" ");
}
