/** Jinja2's filters over sequences and mappings: join, first, last, list, sort, unique, map, select, ... */

import { bindArgs, REQUIRED, splitArgs } from "./args.js";
import { pyGetattr, pyGetitem } from "./py-access.js";
import { PyError, typeError } from "./py-errors.js";
import { iterate, pyAdd, pyEq, pyOrder, truthy } from "./py-ops.js";
import { isDict, isStr, makeTuple, pyStr } from "./python-values.js";
import { TESTS } from "./tests.js";
import { isUndefined, undefinedWithHint } from "./undefined.js";

export type FilterFn = (value: unknown, ...args: unknown[]) => unknown;

/** Jinja2's `make_attrgetter`: `"a.b.0"` looks up `a`, then `b`, then item 0. */
function attrGetter(attribute: unknown, lower = false, dflt?: unknown): (item: unknown) => unknown {
  const parts =
    attribute === null || attribute === undefined
      ? []
      : isStr(attribute)
        ? attribute
            .toString()
            .split(".")
            .map((p) => (/^\d+$/.test(p) ? Number(p) : p))
        : [attribute];
  return (item) => {
    let v = item;
    for (const p of parts) {
      v = pyGetitem(v, p);
      if (dflt !== undefined && isUndefined(v)) return dflt;
    }
    return lower && isStr(v) ? v.toString().toLowerCase() : v;
  };
}

function multiGetter(attribute: unknown, lower: boolean): (item: unknown) => unknown {
  if (!isStr(attribute) || !attribute.includes(",")) return attrGetter(attribute, lower);
  const getters = attribute
    .toString()
    .split(",")
    .map((a) => attrGetter(a, lower));
  return (item) => getters.map((g) => g(item));
}

function sortBy(items: unknown[], key: (x: unknown) => unknown, reverse: boolean): unknown[] {
  const keyed = items.map((item) => ({ item, key: key(item) }));
  keyed.sort((a, b) => (reverse ? -1 : 1) * pyOrder(a.key, b.key));
  return keyed.map((k) => k.item);
}

function minMax(name: string, sign: number): FilterFn {
  return (value, ...args) => {
    const [caseSensitive, attribute] = bindArgs(name, args, [
      ["case_sensitive", false],
      ["attribute", null],
    ]);
    const items = iterate(value);
    if (items.length === 0) return undefinedWithHint("No aggregated item, sequence was empty.");
    const key = attrGetter(attribute, !truthy(caseSensitive));
    let best = items[0];
    let bestKey = key(best);
    for (const item of items.slice(1)) {
      const k = key(item);
      if (sign * pyOrder(k, bestKey) < 0) [best, bestKey] = [item, k];
    }
    return best;
  };
}

function selectOrReject(name: string, byAttribute: boolean, keep: boolean): FilterFn {
  return (value, ...args) => {
    const { positional, kwargs } = splitArgs(args);
    const rest = [...positional];
    if (byAttribute && rest.length === 0) throw typeError(`${name}() missing required argument: 'attr'`);
    const getter = byAttribute ? attrGetter(rest.shift()) : (x: unknown) => x;
    const testName = rest.shift();
    let test: (x: unknown) => boolean = truthy;
    if (testName !== undefined) {
      const fn = TESTS.get(pyStr(testName));
      if (!fn) throw new PyError("TemplateRuntimeError", `No test named ${pyStr(testName)}.`);
      const extra = kwargs.size > 0 ? [...rest, { ...Object.fromEntries(kwargs), __keywords: true }] : rest;
      test = (x) => fn(x, ...extra);
    }
    return iterate(value).filter((item) => test(getter(item)) === keep);
  };
}

export function sequenceFilters(
  lookupFilter: (name: string) => FilterFn | undefined,
): Array<[string, FilterFn]> {
  return [
    [
      "join",
      (value, ...args) => {
        const [d, attribute] = bindArgs("join", args, [
          ["d", ""],
          ["attribute", null],
        ]);
        const get = attrGetter(attribute);
        return iterate(value)
          .map((x) => pyStr(get(x)))
          .join(pyStr(d));
      },
    ],
    [
      "first",
      (value) => {
        const items = iterate(value);
        return items.length > 0 ? items[0] : undefinedWithHint("No first item, sequence was empty.");
      },
    ],
    [
      "last",
      (value) => {
        if (isDict(value) || isStr(value) || Array.isArray(value)) {
          const items = iterate(value);
          return items.length > 0
            ? items[items.length - 1]
            : undefinedWithHint("No last item, sequence was empty.");
        }
        throw typeError("argument to reversed() must be a sequence");
      },
    ],
    ["list", (value) => [...iterate(value)]],
    [
      "reverse",
      (value) => {
        const items = [...iterate(value)].reverse();
        return isStr(value) ? items.join("") : items;
      },
    ],
    [
      "sort",
      (value, ...args) => {
        const [reverse, caseSensitive, attribute] = bindArgs("sort", args, [
          ["reverse", false],
          ["case_sensitive", false],
          ["attribute", null],
        ]);
        return sortBy([...iterate(value)], multiGetter(attribute, !truthy(caseSensitive)), truthy(reverse));
      },
    ],
    [
      "dictsort",
      (value, ...args) => {
        const [caseSensitive, by, reverse] = bindArgs("dictsort", args, [
          ["case_sensitive", false],
          ["by", "key"],
          ["reverse", false],
        ]);
        if (!isDict(value)) throw typeError("dictsort requires a mapping");
        const pos = by === "key" ? 0 : by === "value" ? 1 : -1;
        if (pos < 0) throw new PyError("FilterArgumentError", "You can only sort by either 'key' or 'value'");
        const lower = !truthy(caseSensitive);
        const key = (x: unknown): unknown => {
          const v = (x as unknown[])[pos];
          return lower && isStr(v) ? v.toString().toLowerCase() : v;
        };
        return sortBy(
          Object.entries(value).map((e) => makeTuple(e)),
          key,
          truthy(reverse),
        );
      },
    ],
    [
      "items",
      (value) => {
        if (isUndefined(value)) return [];
        if (!isDict(value)) throw typeError("Can only get item pairs from a mapping.");
        return Object.entries(value).map((e) => makeTuple(e));
      },
    ],
    [
      "unique",
      (value, ...args) => {
        const [caseSensitive, attribute] = bindArgs("unique", args, [
          ["case_sensitive", false],
          ["attribute", null],
        ]);
        const key = attrGetter(attribute, !truthy(caseSensitive));
        const seen: unknown[] = [];
        return iterate(value).filter((item) => {
          const k = key(item);
          if (seen.some((s) => pyEq(s, k))) return false;
          seen.push(k);
          return true;
        });
      },
    ],
    ["min", minMax("min", 1)],
    ["max", minMax("max", -1)],
    [
      "sum",
      (value, ...args) => {
        const [attribute, start] = bindArgs("sum", args, [
          ["attribute", null],
          ["start", 0],
        ]);
        const get = attrGetter(attribute);
        return iterate(value).reduce((acc: unknown, item) => pyAdd(acc, get(item)), start);
      },
    ],
    [
      "map",
      (value, ...args) => {
        const { positional, kwargs } = splitArgs(args);
        if (positional.length === 0 && kwargs.has("attribute")) {
          const get = attrGetter(kwargs.get("attribute"), false, kwargs.get("default"));
          return iterate(value).map(get);
        }
        const [name, ...rest] = positional;
        if (name === undefined) throw typeError("map requires a filter argument");
        const fn = lookupFilter(pyStr(name));
        if (!fn) throw new PyError("TemplateRuntimeError", `No filter named ${pyStr(name)}.`);
        const extra = kwargs.size > 0 ? [...rest, { ...Object.fromEntries(kwargs), __keywords: true }] : rest;
        return iterate(value).map((item) => fn(item, ...extra));
      },
    ],
    ["select", selectOrReject("select", false, true)],
    ["reject", selectOrReject("reject", false, false)],
    ["selectattr", selectOrReject("selectattr", true, true)],
    ["rejectattr", selectOrReject("rejectattr", true, false)],
    [
      "attr",
      (value, ...args) => {
        const [name] = bindArgs("attr", args, [["name", REQUIRED]]);
        return pyGetattr(value, pyStr(name));
      },
    ],
  ];
}
