/**
 * Every Jinja2 builtin filter, by name, in one table (`{{ value | name(args) }}`). Short filters are
 * written out here; longer ones live in filters-text.ts, filters-num.ts, filters-seq.ts and
 * filters-html.ts. To add a filter, add a `def(name, params, fn)` line: `params` is its Python signature
 * after the value (`[["width", 80]]`, REQUIRED for no default), and `fn` gets the value and the bound
 * arguments. registry.ts turns the table into the FILTERS map; a filter rejects an undefined value or
 * argument (StrictUndefined) unless it is listed in TOLERANT_FILTERS.
 */

import { bindArgs, type FilterFn, type Lookup, REQUIRED } from "../python/args.js";
import { escapeHtml, Markup } from "../python/markup.js";
import { isNumeric, numValue, PyFloat } from "../python/number.js";
import { pyLen, truthy } from "../python/ops.js";
import { pformat } from "../python/pprint.js";
import { pyCenter, pyReplace, pyStrip } from "../python/string.js";
import { isUndefined } from "../python/undefined.js";
import { pyStr } from "../python/values.js";
import { striptags, urlencode, urlize, urlizeRel, xmlattr } from "./filters-html.js";
import { abs, filesizeformat, round, toFloat, toInt } from "./filters-num.js";
import { sequenceFilters } from "./filters-seq.js";
import { capitalize, format, indent, title, truncate, wordcount, wordwrap } from "./filters-text.js";
import { toJson } from "./tojson.js";

type Params = ReadonlyArray<readonly [string, unknown]>;

function def(
  name: string,
  params: Params,
  f: (value: unknown, ...args: unknown[]) => unknown,
): [string, FilterFn] {
  return [name, (value, ...args) => f(value, ...bindArgs(name, args, params))];
}

/** `s | string` keeps a Markup a Markup (Jinja2's `soft_str`). */
function softStr(v: unknown): string | Markup {
  return v instanceof Markup ? v : pyStr(v);
}

function defaultFilter(value: unknown, dflt: unknown, boolean: unknown): unknown {
  return isUndefined(value) || (truthy(boolean) && !truthy(value)) ? dflt : value;
}

/** Filters that accept an undefined value (StrictUndefined lets these through). */
export const TOLERANT_FILTERS: ReadonlySet<string> = new Set(["default", "d", "items"]);

/** The parameters of `default` (and its alias `d`). */
const DEFAULT_PARAMS: Params = [
  ["default_value", ""],
  ["boolean", false],
];

/** Filters of any value: numbers, lengths, defaults, conversions. */
function valueFilters(): Array<[string, FilterFn]> {
  return [
    def("abs", [], abs),
    def("count", [], pyLen),
    def("d", DEFAULT_PARAMS, defaultFilter),
    def("default", DEFAULT_PARAMS, defaultFilter),
    def("filesizeformat", [["binary", false]], (v, b) => filesizeformat(v, truthy(b))),
    def("float", [["default", new PyFloat(0)]], toFloat),
    def(
      "int",
      [
        ["default", 0],
        ["base", 10],
      ],
      toInt,
    ),
    def("length", [], pyLen),
    def("pprint", [], pformat),
    def(
      "round",
      [
        ["precision", 0],
        ["method", "common"],
      ],
      round,
    ),
    def("string", [], softStr),
    def("tojson", [["indent", null]], (v, i) => new Markup(toJson(v, i))),
  ];
}

/** Filters that escape, mark safe or build HTML and URLs. */
function markupFilters(): Array<[string, FilterFn]> {
  return [
    def("e", [], escapeHtml),
    def("escape", [], escapeHtml),
    def("forceescape", [], (v) => escapeHtml(pyStr(v))),
    def("safe", [], (v) => (v instanceof Markup ? v : new Markup(pyStr(v)))),
    def("striptags", [], striptags),
    def("urlencode", [], urlencode),
    def(
      "urlize",
      [
        ["trim_url_limit", null],
        ["nofollow", false],
        ["target", null],
        ["rel", null],
        ["extra_schemes", null],
      ],
      (v, limit, nofollow, target, rel, schemes) =>
        urlize(pyStr(v), {
          trimUrlLimit: isNumeric(limit) ? numValue(limit) : null,
          rel: urlizeRel(rel, truthy(nofollow)),
          target: target === null ? null : pyStr(target),
          extraSchemes: schemes === null ? [] : (schemes as unknown[]).map(pyStr),
        }),
    ),
    def("xmlattr", [["autospace", true]], (v, a) => xmlattr(v, truthy(a))),
  ];
}

/** Filters of strings: case, padding, replacing, wrapping. */
function textFilters(): Array<[string, FilterFn]> {
  return [
    def("capitalize", [], (v) => capitalize(pyStr(v))),
    def("center", [["width", 80]], (v, w) => pyCenter(pyStr(v), isNumeric(w) ? numValue(w) : 80)),
    ["format", (v, ...args) => format(v, args)],
    def(
      "indent",
      [
        ["width", 4],
        ["first", false],
        ["blank", false],
      ],
      (v, w, f, b) => {
        const out = indent(pyStr(v), w, f, b);
        return v instanceof Markup ? new Markup(out) : out;
      },
    ),
    def("lower", [], (v) => pyStr(v).toLowerCase()),
    def(
      "replace",
      [
        ["old", REQUIRED],
        ["new", REQUIRED],
        ["count", null],
      ],
      (v, o, n, c) => pyReplace(pyStr(v), pyStr(o), pyStr(n), isNumeric(c) ? numValue(c) : -1),
    ),
    def("title", [], (v) => title(pyStr(v))),
    def("trim", [["chars", null]], (v, chars) => pyStrip(pyStr(v), chars === null ? null : pyStr(chars))),
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
    def("upper", [], (v) => pyStr(v).toUpperCase()),
    def("wordcount", [], (v) => wordcount(pyStr(v))),
    def(
      "wordwrap",
      [
        ["width", 79],
        ["break_long_words", true],
        ["wrapstring", null],
        ["break_on_hyphens", true],
      ],
      (v, w, b, s, h) => wordwrap(pyStr(v), w, b, s, h),
    ),
  ];
}

/** All builtin filters; `lookup` finds other filters and tests by name (for `map`, `select`, ...). */
export function builtinFilters(lookup: Lookup): Array<[string, FilterFn]> {
  return [...valueFilters(), ...textFilters(), ...markupFilters(), ...sequenceFilters(lookup)];
}
