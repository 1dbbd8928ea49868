/**
 * Python's `str` methods as templates call them (`s.strip()`, `s.split(',')`, `s.partition('=')`,
 * `'{}: {}'.format(k, v)`...). To add one, add a `def(...)` line to STR_METHODS; py-methods.ts looks
 * methods up here.
 */

import { type ParamSpec, REQUIRED } from "./args.js";
import { typeError, valueError } from "./errors.js";
import { strFormat } from "./format-spec.js";
import { lazyRegExp } from "./lazy-regexp.js";
import { defMethod, type Method } from "./method-def.js";
import { isNumeric, numValue } from "./number.js";
import { iterate, pySlice } from "./ops.js";
import {
  codePoints,
  cpLength,
  NON_PRINTABLE_RE,
  pyCenter,
  pyReplace,
  pyRsplit,
  pySplit,
  pySplitlines,
  pyStrip,
} from "./string.js";
import { isStr, makeTuple, typeName } from "./values.js";

const def = defMethod<string>;

function str(x: unknown, what: string): string {
  if (!isStr(x)) throw typeError(`${what} must be str, not ${typeName(x)}`);
  return x.toString();
}

function optStr(x: unknown, what: string): string | null {
  return x === null || x === undefined ? null : str(x, what);
}

function int(x: unknown, dflt: number): number {
  if (x === null || x === undefined) return dflt;
  if (!isNumeric(x)) throw typeError(`'${typeName(x)}' object cannot be interpreted as an integer`);
  return numValue(x);
}

function affix(x: unknown): string[] {
  if (Array.isArray(x)) return x.map((p) => str(p, "tuple for startswith/endswith"));
  return [str(x, "startswith/endswith first arg")];
}

/** Code-point index of a UTF-16 index. */
function cpIndex(s: string, unitIndex: number): number {
  return unitIndex < 0 ? -1 : cpLength(s.slice(0, unitIndex));
}

const UPPER_RE = lazyRegExp(() => /\p{Lu}|\p{Lt}/u);
const LOWER_RE = lazyRegExp(() => /\p{Ll}/u);

/** `s[start:end]` as str.find/count/startswith see it, with the code-point offset of its start. */
function window(s: string, start: unknown, end: unknown): [string, number] {
  const len = cpLength(s);
  const lo = start === null || start === undefined ? 0 : int(start, 0);
  const from = lo < 0 ? Math.max(0, lo + len) : Math.min(lo, len);
  return [pySlice(s, start ?? null, end ?? null, null) as string, from];
}

const RANGE: ParamSpec = [
  ["start", null],
  ["end", null],
];

function find(s: string, sub: unknown, start: unknown, end: unknown, last: boolean): number {
  const [w, offset] = window(s, start, end);
  const x = str(sub, "must be str, not");
  const i = last ? w.lastIndexOf(x) : w.indexOf(x);
  return i < 0 ? -1 : offset + cpIndex(w, i);
}

function isTitle(s: string): boolean {
  let cased = false;
  let prevCased = false;
  for (const ch of s) {
    if (UPPER_RE().test(ch)) {
      if (prevCased) return false;
      prevCased = cased = true;
    } else if (LOWER_RE().test(ch)) {
      if (!prevCased) return false;
      prevCased = cased = true;
    } else prevCased = false;
  }
  return cased;
}

function expandTabs(s: string, size: number): string {
  let out = "";
  let col = 0;
  for (const ch of s) {
    if (ch === "\t") {
      const n = size > 0 ? size - (col % size) : 0;
      out += " ".repeat(n);
      col += n;
    } else {
      out += ch;
      col = ch === "\n" || ch === "\r" ? 0 : col + 1;
    }
  }
  return out;
}

function partition(s: string, sep: unknown, last: boolean): string[] {
  const x = str(sep, "must be str, not");
  if (x === "") throw valueError("empty separator");
  const i = last ? s.lastIndexOf(x) : s.indexOf(x);
  if (i < 0) return makeTuple(last ? ["", "", s] : [s, "", ""]);
  return makeTuple([s.slice(0, i), x, s.slice(i + x.length)]);
}

export const STR_METHODS: ReadonlyMap<string, Method<string>> = new Map([
  def("upper", [], (s) => s.toUpperCase()),
  def("lower", [], (s) => s.toLowerCase()),
  def("capitalize", [], (s) => {
    const [first = "", ...rest] = codePoints(s);
    return first.toUpperCase() + rest.join("").toLowerCase();
  }),
  def("title", [], (s) =>
    s.replace(/\p{L}+/gu, (w) => (w[0] ?? "").toUpperCase() + w.slice(1).toLowerCase()),
  ),
  def("strip", [["chars", null]], (s, c) => pyStrip(s, optStr(c, "strip arg"))),
  def("lstrip", [["chars", null]], (s, c) => pyStrip(s, optStr(c, "strip arg"), true, false)),
  def("rstrip", [["chars", null]], (s, c) => pyStrip(s, optStr(c, "strip arg"), false, true)),
  def("startswith", [["prefix", REQUIRED], ...RANGE], (s, p, a, b) => {
    const [w] = window(s, a, b);
    return affix(p).some((x) => w.startsWith(x));
  }),
  def("endswith", [["suffix", REQUIRED], ...RANGE], (s, p, a, b) => {
    const [w] = window(s, a, b);
    return affix(p).some((x) => w.endsWith(x));
  }),
  def("partition", [["sep", REQUIRED]], (s, sep) => partition(s, sep, false)),
  def("rpartition", [["sep", REQUIRED]], (s, sep) => partition(s, sep, true)),
  def("removeprefix", [["prefix", REQUIRED]], (s, p) => {
    const x = str(p, "removeprefix() argument");
    return x !== "" && s.startsWith(x) ? s.slice(x.length) : s;
  }),
  def("removesuffix", [["suffix", REQUIRED]], (s, p) => {
    const x = str(p, "removesuffix() argument");
    return x !== "" && s.endsWith(x) ? s.slice(0, -x.length) : s;
  }),
  def("swapcase", [], (s) =>
    codePoints(s)
      .map((ch) => (UPPER_RE().test(ch) ? ch.toLowerCase() : LOWER_RE().test(ch) ? ch.toUpperCase() : ch))
      .join(""),
  ),
  def("casefold", [], (s) => s.toUpperCase().toLowerCase()),
  def("expandtabs", [["tabsize", 8]], (s, n) => expandTabs(s, int(n, 8))),
  def("format", "*", (s, ...args) => strFormat(s, args)),
  def("format_map", [["mapping", REQUIRED]], (s, m) =>
    strFormat(s, [{ ...(m as object), __keywords: true }]),
  ),
  def(
    "split",
    [
      ["sep", null],
      ["maxsplit", -1],
    ],
    (s, sep, n) => pySplit(s, optStr(sep, "sep"), int(n, -1)),
  ),
  def(
    "rsplit",
    [
      ["sep", null],
      ["maxsplit", -1],
    ],
    (s, sep, n) => pyRsplit(s, optStr(sep, "sep"), int(n, -1)),
  ),
  def("splitlines", [["keepends", false]], (s, keep) => pySplitlines(s, keep === true || keep === 1)),
  def(
    "replace",
    [
      ["old", REQUIRED],
      ["new", REQUIRED],
      ["count", -1],
    ],
    (s, o, n, c) => pyReplace(s, str(o, "replace() argument 1"), str(n, "replace() argument 2"), int(c, -1)),
  ),
  def("join", [["iterable", REQUIRED]], (s, items) =>
    iterate(items)
      .map((x, i) => {
        if (!isStr(x)) throw typeError(`sequence item ${i}: expected str instance, ${typeName(x)} found`);
        return x.toString();
      })
      .join(s),
  ),
  def("find", [["sub", REQUIRED], ...RANGE], (s, sub, a, b) => find(s, sub, a, b, false)),
  def("rfind", [["sub", REQUIRED], ...RANGE], (s, sub, a, b) => find(s, sub, a, b, true)),
  def("index", [["sub", REQUIRED], ...RANGE], (s, sub, a, b) => {
    const i = find(s, sub, a, b, false);
    if (i < 0) throw valueError("substring not found");
    return i;
  }),
  def("rindex", [["sub", REQUIRED], ...RANGE], (s, sub, a, b) => {
    const i = find(s, sub, a, b, true);
    if (i < 0) throw valueError("substring not found");
    return i;
  }),
  def("count", [["sub", REQUIRED], ...RANGE], (s, sub, a, b) => {
    const [w] = window(s, a, b);
    const x = str(sub, "must be str, not");
    return x === "" ? cpLength(w) + 1 : w.split(x).length - 1;
  }),
  def("isdigit", [], (s) => /^\p{Nd}+$/u.test(s)),
  def("isalpha", [], (s) => /^\p{L}+$/u.test(s)),
  def("isalnum", [], (s) => /^[\p{L}\p{N}]+$/u.test(s)),
  def("isspace", [], (s) => s !== "" && pyStrip(s) === ""),
  def("isupper", [], (s) => UPPER_RE().test(s) && !LOWER_RE().test(s)),
  def("islower", [], (s) => LOWER_RE().test(s) && !UPPER_RE().test(s)),
  def("isdecimal", [], (s) => /^\p{Nd}+$/u.test(s)),
  def("isnumeric", [], (s) => /^\p{N}+$/u.test(s)),
  def("istitle", [], (s) => isTitle(s)),
  def("isascii", [], (s) => /^\p{ASCII}*$/u.test(s)),
  def("isidentifier", [], (s) => /^[\p{L}\p{Nl}_][\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]*$/u.test(s)),
  def("isprintable", [], (s) => codePoints(s).every((ch) => ch === " " || !NON_PRINTABLE_RE().test(ch))),
  def(
    "center",
    [
      ["width", REQUIRED],
      ["fillchar", " "],
    ],
    (s, w, f) => pyCenter(s, int(w, 0), str(f, "fillchar")),
  ),
  def(
    "ljust",
    [
      ["width", REQUIRED],
      ["fillchar", " "],
    ],
    (s, w, f) => s + str(f, "fillchar").repeat(Math.max(0, int(w, 0) - cpLength(s))),
  ),
  def(
    "rjust",
    [
      ["width", REQUIRED],
      ["fillchar", " "],
    ],
    (s, w, f) => str(f, "fillchar").repeat(Math.max(0, int(w, 0) - cpLength(s))) + s,
  ),
  def("zfill", [["width", REQUIRED]], (s, w) => {
    const pad = "0".repeat(Math.max(0, int(w, 0) - cpLength(s)));
    return /^[+-]/.test(s) ? s[0] + pad + s.slice(1) : pad + s;
  }),
]);
