/**
 * Jinja2's builtin filters with Python semantics (only the ones swerun supports; any other filter name
 * is rejected when the template is compiled). Every filter except `default`/`d` and `items` rejects an
 * undefined input or argument with Jinja2's UndefinedError.
 */

import { bindArgs, REQUIRED, splitArgs } from "./args.js";
import { type FilterFn, sequenceFilters } from "./filters-seq.js";
import { PyError, typeError } from "./py-errors.js";
import { percentFormat } from "./py-format.js";
import {
  isFloat,
  isNumeric,
  mkNum,
  numValue,
  PyFloat,
  parsePyFloat,
  parsePyInt,
  roundHalfEven,
} from "./py-number.js";
import { pyLen, truthy } from "./py-ops.js";
import { codePoints, cpLength, pyCenter, pyReplace, pySplitlines, pyStrip } from "./py-string.js";
import { isStr, makeTuple, pyStr, typeName } from "./python-values.js";
import { toJson } from "./tojson.js";
import { checkDefined, isUndefined } from "./undefined.js";

const strip = (s: string): string => pyStrip(s);

function toInt(value: unknown, dflt: unknown, base: unknown): unknown {
  if (isStr(value)) {
    const b = isNumeric(base) ? numValue(base) : 10;
    const n = parsePyInt(value.toString(), b, strip) ?? parsePyFloat(value.toString(), strip);
    return n === null || !Number.isFinite(n) ? dflt : Math.trunc(n);
  }
  if (isNumeric(value)) {
    const v = numValue(value);
    return Number.isFinite(v) ? Math.trunc(v) || 0 : dflt;
  }
  return dflt;
}

function toFloat(value: unknown, dflt: unknown): unknown {
  if (isNumeric(value)) return new PyFloat(numValue(value));
  if (isStr(value)) {
    const n = parsePyFloat(value.toString(), strip);
    return n === null ? dflt : new PyFloat(n);
  }
  return dflt;
}

function round(value: unknown, precision: unknown, method: unknown): unknown {
  if (method !== "common" && method !== "ceil" && method !== "floor") {
    throw new PyError("FilterArgumentError", "method must be common, ceil or floor");
  }
  if (!isNumeric(value)) throw typeError(`type ${typeName(value)} doesn't define __round__ method`);
  if (!isNumeric(precision))
    throw typeError(`'${typeName(precision)}' object cannot be interpreted as an integer`);
  const p = numValue(precision);
  const v = numValue(value);
  if (method === "common") return mkNum(roundHalfEven(v, p), isFloat(value));
  const factor = 10 ** p;
  return new PyFloat((method === "ceil" ? Math.ceil(v * factor) : Math.floor(v * factor)) / factor);
}

function indent(s: string, width: unknown, first: unknown, blank: unknown): string {
  const indention = isStr(width) ? width.toString() : " ".repeat(isNumeric(width) ? numValue(width) : 4);
  const lines = pySplitlines(`${s}\n`);
  let rv: string;
  if (truthy(blank)) rv = lines.join(`\n${indention}`);
  else {
    rv = lines[0] ?? "";
    const rest = lines.slice(1);
    if (rest.length > 0) rv += `\n${rest.map((line) => (line ? indention + line : line)).join("\n")}`;
  }
  return truthy(first) ? indention + rv : rv;
}

function truncate(s: string, length: unknown, killwords: unknown, end: unknown, leeway: unknown): string {
  const len = isNumeric(length) ? numValue(length) : 255;
  const endText = pyStr(end);
  const lee = leeway === null || leeway === undefined ? 5 : numValue(leeway as number);
  const cps = codePoints(s);
  if (cps.length <= len + lee) return s;
  const head = cps.slice(0, Math.max(0, len - cpLength(endText))).join("");
  if (truthy(killwords)) return head + endText;
  const space = head.lastIndexOf(" ");
  return (space < 0 ? head : head.slice(0, space)) + endText;
}

function title(s: string): string {
  return s
    .split(/([-\s({[<]+)/)
    .filter((item) => item !== "")
    .map((item) => {
      const [first = "", ...rest] = codePoints(item);
      return first.toUpperCase() + rest.join("").toLowerCase();
    })
    .join("");
}

function htmlEscape(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&#34;", "'": "&#39;" })[c] ?? c,
  );
}

function def(
  name: string,
  params: ReadonlyArray<readonly [string, unknown]>,
  f: (...a: unknown[]) => unknown,
): [string, FilterFn] {
  return [name, (value, ...args) => f(value, ...bindArgs(name, args, params))];
}

function defaultFilter(value: unknown, ...args: unknown[]): unknown {
  const [dflt, boolean] = bindArgs("default", args, [
    ["default_value", ""],
    ["boolean", false],
  ]);
  return isUndefined(value) || (truthy(boolean) && !truthy(value)) ? dflt : value;
}

const escapeFilter = def("escape", [], (v) => htmlEscape(pyStr(v)))[1];

const BASE: Array<[string, FilterFn]> = [
  def("length", [], (v) => pyLen(v)),
  def("count", [], (v) => pyLen(v)),
  def("string", [], (v) => pyStr(v)),
  def("safe", [], (v) => pyStr(v)),
  ["e", escapeFilter],
  ["escape", escapeFilter],
  def("upper", [], (v) => pyStr(v).toUpperCase()),
  def("lower", [], (v) => pyStr(v).toLowerCase()),
  def("capitalize", [], (v) => {
    const [first = "", ...rest] = codePoints(pyStr(v));
    return first.toUpperCase() + rest.join("").toLowerCase();
  }),
  def("title", [], (v) => title(pyStr(v))),
  def("trim", [["chars", null]], (v, chars) => pyStrip(pyStr(v), chars === null ? null : pyStr(chars))),
  def("center", [["width", 80]], (v, w) => pyCenter(pyStr(v), isNumeric(w) ? numValue(w) : 80)),
  def("wordcount", [], (v) => (pyStr(v).match(/[\p{L}\p{N}_]+/gu) ?? []).length),
  def(
    "replace",
    [
      ["old", REQUIRED],
      ["new", REQUIRED],
      ["count", null],
    ],
    (v, o, n, c) => pyReplace(pyStr(v), pyStr(o), pyStr(n), isNumeric(c) ? numValue(c) : -1),
  ),
  def(
    "indent",
    [
      ["width", 4],
      ["first", false],
      ["blank", false],
    ],
    (v, w, f, b) => indent(pyStr(v), w, f, b),
  ),
  def(
    "truncate",
    [
      ["length", 255],
      ["killwords", false],
      ["end", "..."],
      ["leeway", null],
    ],
    (v, length, kill, end, lee) => truncate(pyStr(v), length, kill, end, lee),
  ),
  def(
    "int",
    [
      ["default", 0],
      ["base", 10],
    ],
    (v, d, b) => toInt(v, d, b),
  ),
  def("float", [["default", new PyFloat(0)]], (v, d) => toFloat(v, d)),
  def(
    "round",
    [
      ["precision", 0],
      ["method", "common"],
    ],
    (v, p, m) => round(v, p, m),
  ),
  def("abs", [], (v) => {
    if (!isNumeric(v)) throw typeError(`bad operand type for abs(): '${typeName(v)}'`);
    return mkNum(Math.abs(numValue(v)), isFloat(v));
  }),
  def("tojson", [["indent", null]], (v, i) => toJson(v, i)),
  [
    "format",
    (value, ...args) => {
      const { positional, kwargs } = splitArgs(args);
      if (positional.length > 0 && kwargs.size > 0) {
        throw new PyError(
          "FilterArgumentError",
          "can't handle positional and keyword arguments at the same time",
        );
      }
      return percentFormat(
        pyStr(value),
        kwargs.size > 0 ? Object.fromEntries(kwargs) : makeTuple(positional),
      );
    },
  ],
];

const TOLERANT = new Set(["default", "d", "items"]);

function strict(fn: FilterFn): FilterFn {
  return (value, ...args) => {
    checkDefined(value);
    for (const a of args) checkDefined(a);
    return fn(value, ...args);
  };
}

const table = new Map<string, FilterFn>();

export const FILTERS: ReadonlyMap<string, FilterFn> = table;

for (const [name, fn] of [
  ...BASE,
  ...sequenceFilters((name) => table.get(name)),
  ["default", defaultFilter] as [string, FilterFn],
  ["d", defaultFilter] as [string, FilterFn],
]) {
  table.set(name, TOLERANT.has(name) ? fn : strict(fn));
}
