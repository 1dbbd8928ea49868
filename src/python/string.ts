import { valueError } from "./errors.js";
import { lazyRegExp } from "./lazy-regexp.js";

/**
 * Python `str` semantics on JS strings: Python indexes and counts code points, JS counts UTF-16 units.
 * Every helper has a fast path for the common case of a string without surrogates.
 */

const SURROGATE_RE = /[\uD800-\uDFFF]/;

export function hasSurrogates(s: string): boolean {
  return SURROGATE_RE.test(s);
}

// A one-entry memo: templates typically take `len()` of the same large string several times per render
// (`output | length < 10000`, `output | length - 10000`, `output[-5000:]`).
let memoString: string | undefined;
let memoLength = 0;

/** `len(s)`: the number of code points. */
export function cpLength(s: string): number {
  if (!hasSurrogates(s)) return s.length;
  if (s === memoString) return memoLength;
  let n = s.length;
  let high = false;
  for (let i = 0; i < s.length; i++) {
    const kind = s.charCodeAt(i) & 0xfc00;
    if (high && kind === 0xdc00) {
      n--;
      high = false;
    } else {
      high = kind === 0xd800;
    }
  }
  memoString = s;
  memoLength = n;
  return n;
}

function isPair(s: string, unit: number): boolean {
  return (s.charCodeAt(unit) & 0xfc00) === 0xd800 && (s.charCodeAt(unit + 1) & 0xfc00) === 0xdc00;
}

/** The UTF-16 offset of code point `index` (0 <= index <= total), scanning from the nearer end. */
function unitOffset(s: string, index: number, total: number): number {
  if (index <= total - index) {
    let unit = 0;
    for (let cp = 0; cp < index; cp++) unit += isPair(s, unit) ? 2 : 1;
    return unit;
  }
  let unit = s.length;
  for (let cp = total; cp > index; cp--) unit -= unit >= 2 && isPair(s, unit - 2) ? 2 : 1;
  return unit;
}

/** `s[start:stop]` for code point indices with `0 <= start <= stop <= len(s)`. */
export function cpSubstring(s: string, start: number, stop: number): string {
  const total = cpLength(s);
  return s.slice(unitOffset(s, start, total), unitOffset(s, stop, total));
}

/** The code points of a string, each as a string (a lone surrogate stays one item, as in Python). */
export function codePoints(s: string): string[] {
  return hasSurrogates(s) ? Array.from(s) : s.split("");
}

/** Python's `str.isspace()` character set. */
const PY_WS = "\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000";
const LEADING_WS_RE = new RegExp(`^[${PY_WS}]+`);
const TRAILING_WS_RE = new RegExp(`[${PY_WS}]+$`);
const WS_RUN_RE = new RegExp(`[${PY_WS}]+`);

/** Whether a one-character string is whitespace to Python (`str.isspace()`). */
export function isPySpace(ch: string): boolean {
  return ch.length === 1 && isPySpaceCode(ch.charCodeAt(0));
}

/** Whether a UTF-16 code unit is whitespace to Python (every such character is in the BMP). */
export function isPySpaceCode(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d) || (code >= 0x1c && code <= 0x1f);
  if (code < 0x85) return false;
  return (
    code === 0x85 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000
  );
}

/** `str.strip(chars)` / `lstrip` / `rstrip`; `chars` null means whitespace. */
export function pyStrip(s: string, chars: string | null = null, left = true, right = true): string {
  if (chars === null) {
    let start = 0;
    let end = s.length;
    if (left) while (start < end && isPySpaceCode(s.charCodeAt(start))) start++;
    if (right) while (end > start && isPySpaceCode(s.charCodeAt(end - 1))) end--;
    return start === 0 && end === s.length ? s : s.slice(start, end);
  }
  const set = new Set(codePoints(chars));
  const cps = codePoints(s);
  let start = 0;
  let end = cps.length;
  if (left) while (start < end && set.has(cps[start] ?? "")) start++;
  if (right) while (end > start && set.has(cps[end - 1] ?? "")) end--;
  return cps.slice(start, end).join("");
}

/** `str.lstrip()`. */
export const pyLstrip = (s: string): string => pyStrip(s, null, true, false);

/** `str.rstrip()`. */
export const pyRstrip = (s: string): string => pyStrip(s, null, false, true);

// biome-ignore lint/suspicious/noControlCharactersInRegex: Python's str.splitlines() breaks on these.
const LINE_BREAK_RE = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

/** `str.splitlines(keepends)`. */
export function pySplitlines(s: string, keepends = false): string[] {
  if (s === "") return [];
  if (keepends) {
    const lines: string[] = [];
    let rest = s;
    for (let m = LINE_BREAK_RE.exec(rest); m; m = LINE_BREAK_RE.exec(rest)) {
      lines.push(rest.slice(0, m.index + m[0].length));
      rest = rest.slice(m.index + m[0].length);
    }
    if (rest !== "") lines.push(rest);
    return lines;
  }
  const parts = s.split(LINE_BREAK_RE);
  if (parts[parts.length - 1] === "") parts.pop();
  return parts;
}

/** `str.split(sep, maxsplit)`. */
export function pySplit(s: string, sep: string | null = null, maxsplit = -1): string[] {
  if (sep === null && maxsplit < 0) return splitOnSpace(s);
  if (sep === null) {
    const out: string[] = [];
    let rest = s;
    for (;;) {
      rest = rest.replace(LEADING_WS_RE, "");
      if (rest === "") break;
      const m = maxsplit >= 0 && out.length === maxsplit ? null : WS_RUN_RE.exec(rest);
      if (!m) {
        out.push(rest);
        break;
      }
      out.push(rest.slice(0, m.index));
      rest = rest.slice(m.index);
    }
    return out;
  }
  if (sep === "") throw valueError("empty separator");
  const parts = s.split(sep);
  if (maxsplit < 0 || parts.length <= maxsplit + 1) return parts;
  return [...parts.slice(0, maxsplit), parts.slice(maxsplit).join(sep)];
}

/** `str.split()`: the words between runs of whitespace, no empty strings. */
function splitOnSpace(s: string): string[] {
  const words: string[] = [];
  let i = 0;
  while (i < s.length) {
    while (i < s.length && isPySpaceCode(s.charCodeAt(i))) i++;
    if (i >= s.length) break;
    const start = i;
    while (i < s.length && !isPySpaceCode(s.charCodeAt(i))) i++;
    words.push(s.slice(start, i));
  }
  return words;
}

/** `str.rsplit(sep, maxsplit)`. */
export function pyRsplit(s: string, sep: string | null = null, maxsplit = -1): string[] {
  if (maxsplit < 0) return pySplit(s, sep);
  if (sep === null && maxsplit < 0) return splitOnSpace(s);
  if (sep === null) {
    const out: string[] = [];
    let rest = s.replace(TRAILING_WS_RE, "");
    while (rest !== "" && out.length < maxsplit) {
      const m = /\S*$/u.exec(rest.replace(TRAILING_WS_RE, ""));
      const word = m?.[0] ?? "";
      const cut = rest.length - word.length;
      const before = rest.slice(0, cut);
      if (before.replace(TRAILING_WS_RE, "") === "") break;
      out.unshift(word);
      rest = before.replace(TRAILING_WS_RE, "");
    }
    if (rest !== "") out.unshift(rest.replace(LEADING_WS_RE, ""));
    return out;
  }
  if (sep === "") throw valueError("empty separator");
  const parts = s.split(sep);
  if (parts.length <= maxsplit + 1) return parts;
  return [parts.slice(0, parts.length - maxsplit).join(sep), ...parts.slice(parts.length - maxsplit)];
}

/** `str.replace(old, new, count)`, counting code points when `old` is empty. */
export function pyReplace(s: string, oldStr: string, newStr: string, count = -1): string {
  if (count === 0) return s;
  if (oldStr === "") {
    const cps = codePoints(s);
    const out: string[] = [];
    let done = 0;
    for (const cp of cps) {
      if (count < 0 || done < count) {
        out.push(newStr);
        done++;
      }
      out.push(cp);
    }
    if (count < 0 || done < count) out.push(newStr);
    return out.join("");
  }
  if (count < 0) return s.split(oldStr).join(newStr);
  const parts = s.split(oldStr);
  if (parts.length <= count + 1) return parts.join(newStr);
  return parts.slice(0, count + 1).join(newStr) + oldStr + parts.slice(count + 1).join(oldStr);
}

/** `str.center(width)` with CPython's placement of the odd padding character. */
export function pyCenter(s: string, width: number, fill = " "): string {
  const len = cpLength(s);
  if (len >= width) return s;
  const pad = width - len;
  const left = Math.floor(pad / 2) + (pad & width & 1);
  return fill.repeat(left) + s + fill.repeat(pad - left);
}

/** Compares two strings by code point, as Python does (JS `<` compares UTF-16 units). */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  if (!hasSurrogates(a) && !hasSurrogates(b)) return a < b ? -1 : 1;
  const x = codePoints(a);
  const y = codePoints(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) {
    const cx = x[i]?.codePointAt(0) ?? 0;
    const cy = y[i]?.codePointAt(0) ?? 0;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
  return x.length === y.length ? 0 : x.length < y.length ? -1 : 1;
}

/** Characters `str.isprintable()` rejects (a space is printable). */
export const NON_PRINTABLE_RE = lazyRegExp(() => /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u);
const SIMPLE_REPR_RE = /^[\x20-\x26\x28-\x5b\x5d-\x7e]*$/;

function hexEscape(code: number): string {
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, "0")}`;
  if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, "0")}`;
  return `\\U${code.toString(16).padStart(8, "0")}`;
}

/** `repr(str)`: single quotes unless the text has a `'` and no `"`; escapes like CPython. */
export function strRepr(s: string): string {
  if (SIMPLE_REPR_RE.test(s)) return `'${s}'`;
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === quote || ch === "\\") out += `\\${ch}`;
    else if (ch === "\t") out += "\\t";
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (code < 0x20 || code === 0x7f) out += hexEscape(code);
    else if (code < 0x7f) out += ch;
    else if (code !== 0x20 && NON_PRINTABLE_RE().test(ch)) out += hexEscape(code);
    else out += ch;
  }
  return out + quote;
}

/** `ascii()` of a repr: every non-ASCII character escaped as `\xNN`, `\uNNNN` or `\UNNNNNNNN`. */
export function toAscii(repr: string): string {
  return repr.replace(/\P{ASCII}/gu, (ch) => hexEscape(ch.codePointAt(0) ?? 0));
}
