/**
 * The Python methods templates commonly call on values: `s.strip()`, `s.split(',')`, `d.items()`,
 * `d.get('k', 'x')`, `l.index(x)`... Each returns a bound function, or undefined when Python has no
 * such method (the lookup then yields an undefined value, as in Jinja2).
 */

import { bindArgs, type ParamSpec, REQUIRED } from "./args.js";
import { typeError, valueError } from "./py-errors.js";
import { isNumeric, numValue } from "./py-number.js";
import { iterate, pyEq } from "./py-ops.js";
import {
  codePoints,
  cpLength,
  pyCenter,
  pyReplace,
  pyRsplit,
  pySplit,
  pySplitlines,
  pyStrip,
} from "./py-string.js";
import { isStr, makeTuple, type PyDict, pyStr, typeName } from "./python-values.js";
import { checkDefined } from "./undefined.js";

type Method<T> = (self: T, args: unknown[]) => unknown;

function def<T>(
  name: string,
  params: ParamSpec,
  f: (self: T, ...args: unknown[]) => unknown,
): [string, Method<T>] {
  return [name, (self, args) => f(self, ...bindArgs(name, args.map(checkDefined), params))];
}

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

const UPPER_RE = /\p{Lu}|\p{Lt}/u;
const LOWER_RE = /\p{Ll}/u;

const STR_METHODS = new Map<string, Method<string>>([
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
  def("startswith", [["prefix", REQUIRED]], (s, p) => affix(p).some((x) => s.startsWith(x))),
  def("endswith", [["suffix", REQUIRED]], (s, p) => affix(p).some((x) => s.endsWith(x))),
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
  def("splitlines", [], (s) => pySplitlines(s)),
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
  def("find", [["sub", REQUIRED]], (s, sub) => cpIndex(s, s.indexOf(str(sub, "find arg")))),
  def("rfind", [["sub", REQUIRED]], (s, sub) => cpIndex(s, s.lastIndexOf(str(sub, "rfind arg")))),
  def("index", [["sub", REQUIRED]], (s, sub) => {
    const i = s.indexOf(str(sub, "index arg"));
    if (i < 0) throw valueError("substring not found");
    return cpIndex(s, i);
  }),
  def("count", [["sub", REQUIRED]], (s, sub) => {
    const x = str(sub, "count arg");
    return x === "" ? cpLength(s) + 1 : s.split(x).length - 1;
  }),
  def("isdigit", [], (s) => /^\p{Nd}+$/u.test(s)),
  def("isalpha", [], (s) => /^\p{L}+$/u.test(s)),
  def("isalnum", [], (s) => /^[\p{L}\p{N}]+$/u.test(s)),
  def("isspace", [], (s) => s !== "" && pyStrip(s) === ""),
  def("isupper", [], (s) => UPPER_RE.test(s) && !LOWER_RE.test(s)),
  def("islower", [], (s) => LOWER_RE.test(s) && !UPPER_RE.test(s)),
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

const DICT_METHODS = new Map<string, Method<PyDict>>([
  def("items", [], (d) => Object.entries(d).map((e) => makeTuple(e))),
  def("keys", [], (d) => Object.keys(d)),
  def("values", [], (d) => Object.values(d)),
  def(
    "get",
    [
      ["key", REQUIRED],
      ["default", null],
    ],
    (d, k, dflt) => {
      const key = pyStr(k);
      return Object.hasOwn(d, key) && d[key] !== undefined ? d[key] : dflt;
    },
  ),
]);

const LIST_METHODS = new Map<string, Method<unknown[]>>([
  def("count", [["value", REQUIRED]], (l, v) => l.filter((x) => pyEq(x, v)).length),
  def("index", [["value", REQUIRED]], (l, v) => {
    const i = l.findIndex((x) => pyEq(x, v));
    if (i < 0) throw valueError(`${pyStr(v)} is not in list`);
    return i;
  }),
  def("append", [["value", REQUIRED]], (l, v) => {
    l.push(v);
    return null;
  }),
]);

function bind<T>(
  table: Map<string, Method<T>>,
  self: T,
  name: string,
): ((...args: unknown[]) => unknown) | undefined {
  const m = table.get(name);
  return m && ((...args: unknown[]) => m(self, args));
}

export function strMethod(s: string, name: string): ((...args: unknown[]) => unknown) | undefined {
  return bind(STR_METHODS, s, name);
}

export function dictMethod(d: PyDict, name: string): ((...args: unknown[]) => unknown) | undefined {
  return bind(DICT_METHODS, d, name);
}

export function listMethod(l: unknown[], name: string): ((...args: unknown[]) => unknown) | undefined {
  return bind(LIST_METHODS, l, name);
}
