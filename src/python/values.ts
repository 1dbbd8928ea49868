/**
 * Python's view of JS values: `str()` and `repr()` as Jinja2 prints them, and type names for messages.
 *
 * Mapping: null/undefined -> None, boolean -> bool, number -> int (integral) or float, PyFloat -> float,
 * string -> str, array -> list (or tuple when marked with `makeTuple`), plain object -> dict.
 */

import { isIntNumber, isNumeric, numberRepr, PyFloat } from "./number.js";
import { strRepr } from "./string.js";
import { isUndefined } from "./undefined.js";

const TUPLE: unique symbol = Symbol("swerun.tuple");

/** Marks an array as a Python tuple (it prints as `(1, 2)`); returns the same array. */
export function makeTuple<T>(items: T[]): T[] {
  Object.defineProperty(items, TUPLE, { value: true });
  return items;
}

export function isTuple(x: unknown): boolean {
  return Array.isArray(x) && (x as unknown as Record<symbol, unknown>)[TUPLE] === true;
}

const FIELDS: unique symbol = Symbol("swerun.namedTuple");

/** A tuple whose items can also be read as attributes (Python's namedtuple), e.g. `groupby`'s groups. */
export function namedTuple(fields: readonly string[], values: unknown[]): unknown[] {
  Object.defineProperty(values, FIELDS, { value: fields });
  return makeTuple(values);
}

/** The value of a namedtuple's field, or undefined when `x` has no such field. */
export function namedField(x: unknown[], name: string): unknown {
  const fields = (x as unknown as Record<symbol, readonly string[] | undefined>)[FIELDS];
  const i = fields?.indexOf(name) ?? -1;
  return i < 0 ? undefined : x[i];
}

const VIEW: unique symbol = Symbol("swerun.dictView");

/** The kinds of dict view `d.keys()`, `d.values()` and `d.items()` return. */
export type ViewKind = "dict_keys" | "dict_values" | "dict_items";

/**
 * Marks an array as a dict view (a snapshot; it iterates like a list and prints as
 * `dict_keys(['a'])`); returns the same array.
 */
export function makeView<T>(kind: ViewKind, items: T[]): T[] {
  Object.defineProperty(items, VIEW, { value: kind });
  return items;
}

export function viewKind(x: unknown): ViewKind | undefined {
  return Array.isArray(x)
    ? ((x as unknown as Record<symbol, ViewKind | undefined>)[VIEW] ?? undefined)
    : undefined;
}

export type PyDict = Record<string, unknown>;

/** A plain JS object, treated as a Python dict. */
export function isDict(x: unknown): x is PyDict {
  if (typeof x !== "object" || x === null || Array.isArray(x)) return false;
  const proto: unknown = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

export function isStr(x: unknown): x is string | string {
  return typeof x === "string" || x instanceof String;
}

/** Python's type name of a value, for error messages (`'int' object is not iterable`). */
export function typeName(x: unknown): string {
  if (x === null || x === undefined) return "NoneType";
  if (typeof x === "boolean") return "bool";
  if (typeof x === "number") return isIntNumber(x) ? "int" : "float";
  if (typeof x === "bigint") return "int";
  if (x instanceof PyFloat) return "float";
  if (isStr(x)) return "str";
  if (Array.isArray(x)) return viewKind(x) ?? (isTuple(x) ? "tuple" : "list");
  if (typeof x === "function") return "function";
  if (isUndefined(x)) return "StrictUndefined";
  if (isDict(x)) return "dict";
  return (x as object).constructor?.name ?? "object";
}

/** Jinja2's `object_type_repr`, used in "has no attribute" messages. */
export function objectTypeRepr(x: unknown): string {
  if (x === null || x === undefined) return "None";
  const qualName = (x as { constructor?: { pyQualName?: unknown } }).constructor?.pyQualName;
  return `${typeof qualName === "string" ? qualName : typeName(x)} object`;
}

/** `str(x)` as Jinja2 prints `{{ x }}`. Undefined values must be rejected by the caller. */
export function pyStr(x: unknown): string {
  if (typeof x === "string") return x;
  if (x === null || x === undefined) return "None";
  if (isNumeric(x)) return numberRepr(x);
  if (x instanceof String) return x.toString();
  return pyRepr(x);
}

/** `repr(x)`. */
export function pyRepr(x: unknown): string {
  return reprInner(x, new Set());
}

function reprInner(x: unknown, seen: Set<unknown>): string {
  if (isStr(x)) return strRepr(x.toString());
  if (x === null || x === undefined) return "None";
  if (isNumeric(x)) return numberRepr(x);
  if (isUndefined(x)) return "Undefined";
  if (typeof x === "function") return `<function ${x.name || "<lambda>"}>`;
  if (typeof x !== "object") return String(x);
  const custom = (x as { __repr__?: unknown }).__repr__;
  if (typeof custom === "function") return String(custom.call(x));
  if (seen.has(x)) return Array.isArray(x) ? "[...]" : "{...}";
  seen.add(x);
  try {
    if (Array.isArray(x)) {
      const items = x.map((item) => reprInner(item, seen));
      const view = viewKind(x);
      if (view) return `${view}([${items.join(", ")}])`;
      if (!isTuple(x)) return `[${items.join(", ")}]`;
      return items.length === 1 ? `(${items[0]},)` : `(${items.join(", ")})`;
    }
    const entries = Object.entries(x).map(([k, v]) => `${strRepr(k)}: ${reprInner(v, seen)}`);
    return `{${entries.join(", ")}}`;
  } finally {
    seen.delete(x);
  }
}
