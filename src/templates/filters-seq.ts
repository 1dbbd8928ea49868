/**
 * Jinja2's filters over sequences and mappings: join, first, last, list, sort, unique, map, select,
 * batch, slice, groupby, random, ... (filters.ts lists them all by name).
 */

import { pyAttribute, pyGetitem } from "../python/access.js";
import { bindArgs, type FilterFn, type Lookup, REQUIRED, splitArgs } from "../python/args.js";
import { PyError, typeError } from "../python/errors.js";
import { isNumeric, numValue } from "../python/number.js";
import { iterate, pyAdd, pyEq, pyOrder, truthy } from "../python/ops.js";
import { isUndefined, undefinedWithHint } from "../python/undefined.js";
import { isDict, isStr, makeTuple, namedTuple, pyStr } from "../python/values.js";

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

function selectOrReject(lookup: Lookup, name: string, byAttribute: boolean, keep: boolean): FilterFn {
  return (value, ...args) => {
    const { positional, kwargs } = splitArgs(args);
    const rest = [...positional];
    if (byAttribute && rest.length === 0) throw typeError(`${name}() missing required argument: 'attr'`);
    const getter = byAttribute ? attrGetter(rest.shift()) : (x: unknown) => x;
    const testName = rest.shift();
    let test: (x: unknown) => boolean = truthy;
    if (testName !== undefined) {
      const fn = lookup.test(pyStr(testName));
      if (!fn) throw new PyError("TemplateRuntimeError", `No test named ${pyStr(testName)}.`);
      const extra = kwargs.size > 0 ? [...rest, { ...Object.fromEntries(kwargs), __keywords: true }] : rest;
      test = (x) => fn(x, ...extra);
    }
    return iterate(value).filter((item) => test(getter(item)) === keep);
  };
}

function count(n: unknown): number {
  if (!isNumeric(n)) throw typeError(`'${typeof n}' object cannot be interpreted as an integer`);
  return numValue(n);
}

/** `batch(n, fill_with)`: lists of `n` items; the last one padded with `fill_with` when given. */
function batch(value: unknown, ...args: unknown[]): unknown[][] {
  const [linecount, fill] = bindArgs("batch", args, [
    ["linecount", REQUIRED],
    ["fill_with", null],
  ]);
  const n = count(linecount);
  const items = iterate(value);
  const out: unknown[][] = [];
  for (let i = 0; i < items.length; i += Math.max(1, n)) out.push(items.slice(i, i + n));
  const last = out[out.length - 1];
  if (last && fill !== null && last.length < n) while (last.length < n) last.push(fill);
  return out;
}

/** `slice(n, fill_with)`: `n` columns of (nearly) equal length; shorter ones padded when `fill_with` is given. */
function sliceFilter(value: unknown, ...args: unknown[]): unknown[][] {
  const [slices, fill] = bindArgs("slice", args, [
    ["slices", REQUIRED],
    ["fill_with", null],
  ]);
  const n = count(slices);
  const items = iterate(value);
  const per = Math.floor(items.length / n);
  const extra = items.length % n;
  const out: unknown[][] = [];
  let offset = 0;
  for (let i = 0; i < n; i++) {
    const start = offset + i * per;
    if (i < extra) offset++;
    const column = items.slice(start, offset + (i + 1) * per);
    if (fill !== null && i >= extra) column.push(fill);
    out.push(column);
  }
  return out;
}

/**
 * `groupby(attribute, default, case_sensitive)`: `(grouper, list)` namedtuples sorted by the key; unless
 * case-sensitive, strings are grouped ignoring case and the grouper is the first item's own value.
 */
function groupby(value: unknown, ...args: unknown[]): unknown[] {
  const [attribute, dflt, caseSensitive] = bindArgs("groupby", args, [
    ["attribute", REQUIRED],
    ["default", null],
    ["case_sensitive", false],
  ]);
  const exact = attrGetter(attribute, false, dflt === null ? undefined : dflt);
  const key = attrGetter(attribute, !truthy(caseSensitive), dflt === null ? undefined : dflt);
  const sorted = sortBy([...iterate(value)], key, false);
  const groups: Array<[unknown, unknown[]]> = [];
  for (const item of sorted) {
    const k = key(item);
    const last = groups[groups.length - 1];
    if (last && pyEq(last[0], k)) last[1].push(item);
    else groups.push([k, [item]]);
  }
  return groups.map(([k, items]) =>
    namedTuple(["grouper", "list"], [truthy(caseSensitive) ? k : exact(items[0]), items]),
  );
}

/** `random`: a random item of the sequence. */
function random(value: unknown): unknown {
  const items = iterate(value);
  if (items.length === 0) return undefinedWithHint("No random item, sequence was empty.");
  return items[Math.floor(Math.random() * items.length)];
}

/** `join`: the items as strings, joined by `d` (an attribute of each with `attribute`). */
function join(value: unknown, ...args: unknown[]): unknown {
  const [d, attribute] = bindArgs("join", args, [
    ["d", ""],
    ["attribute", null],
  ]);
  const get = attrGetter(attribute);
  return iterate(value)
    .map((x) => pyStr(get(x)))
    .join(pyStr(d));
}

/** `first`: the first item of the sequence. */
function first(value: unknown): unknown {
  const items = iterate(value);
  return items.length > 0 ? items[0] : undefinedWithHint("No first item, sequence was empty.");
}

/** `last`: the last item of a sequence (Jinja reverses it, so an iterator is a TypeError). */
function last(value: unknown): unknown {
  if (isDict(value) || isStr(value) || Array.isArray(value)) {
    const items = iterate(value);
    return items.length > 0
      ? items[items.length - 1]
      : undefinedWithHint("No last item, sequence was empty.");
  }
  throw typeError("argument to reversed() must be a sequence");
}

/** `reverse`: the items in reverse order (a string stays a string). */
function reverse(value: unknown): unknown {
  const items = [...iterate(value)].reverse();
  return isStr(value) ? items.join("") : items;
}

/** `sort`: the items sorted, by attributes with `attribute`. */
function sort(value: unknown, ...args: unknown[]): unknown {
  const [reverse, caseSensitive, attribute] = bindArgs("sort", args, [
    ["reverse", false],
    ["case_sensitive", false],
    ["attribute", null],
  ]);
  return sortBy([...iterate(value)], multiGetter(attribute, !truthy(caseSensitive)), truthy(reverse));
}

/** `dictsort`: a mapping's (key, value) pairs sorted by key or by value. */
function dictsort(value: unknown, ...args: unknown[]): unknown {
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
}

/** `items`: a mapping's (key, value) pairs (none for undefined). */
function items(value: unknown): unknown {
  if (isUndefined(value)) return [];
  if (!isDict(value)) throw typeError("Can only get item pairs from a mapping.");
  return Object.entries(value).map((e) => makeTuple(e));
}

/** `unique`: the items without repeats, first one kept. */
function unique(value: unknown, ...args: unknown[]): unknown {
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
}

/** `sum`: the items (or an attribute of each) added to `start`. */
function sum(value: unknown, ...args: unknown[]): unknown {
  const [attribute, start] = bindArgs("sum", args, [
    ["attribute", null],
    ["start", 0],
  ]);
  const get = attrGetter(attribute);
  return iterate(value).reduce((acc: unknown, item) => pyAdd(acc, get(item)), start);
}

/** `map`: an attribute of each item, or each item through the filter `lookup` finds by name. */
function map(lookup: Lookup): FilterFn {
  return (value, ...args) => {
    const { positional, kwargs } = splitArgs(args);
    if (positional.length === 0 && kwargs.has("attribute")) {
      const get = attrGetter(kwargs.get("attribute"), false, kwargs.get("default"));
      return iterate(value).map(get);
    }
    const [name, ...rest] = positional;
    if (name === undefined) throw typeError("map requires a filter argument");
    const fn = lookup.filter(pyStr(name));
    if (!fn) throw new PyError("TemplateRuntimeError", `No filter named ${pyStr(name)}.`);
    const extra = kwargs.size > 0 ? [...rest, { ...Object.fromEntries(kwargs), __keywords: true }] : rest;
    return iterate(value).map((item) => fn(item, ...extra));
  };
}

/** `attr`: an attribute of the value. */
function attr(value: unknown, ...args: unknown[]): unknown {
  const [name] = bindArgs("attr", args, [["name", REQUIRED]]);
  return pyAttribute(value, pyStr(name));
}

/** The sequence filters, by name; `lookup` finds the filters and tests `map` and `select` name. */
export function sequenceFilters(lookup: Lookup): Array<[string, FilterFn]> {
  return [
    ["batch", batch],
    ["slice", sliceFilter],
    ["groupby", groupby],
    ["random", random],
    ["join", join],
    ["first", first],
    ["last", last],
    ["list", (value) => [...iterate(value)]],
    ["reverse", reverse],
    ["sort", sort],
    ["dictsort", dictsort],
    ["items", items],
    ["unique", unique],
    ["min", minMax("min", 1)],
    ["max", minMax("max", -1)],
    ["sum", sum],
    ["map", map(lookup)],
    ["select", selectOrReject(lookup, "select", false, true)],
    ["reject", selectOrReject(lookup, "reject", false, false)],
    ["selectattr", selectOrReject(lookup, "selectattr", true, true)],
    ["rejectattr", selectOrReject(lookup, "rejectattr", true, false)],
    ["attr", attr],
  ];
}
