/**
 * The Python methods templates can call on values: `str` methods (py-str-methods.ts), `dict` methods
 * (`d.items()`, `d.get('k', 'x')`, `d.update(...)`) and `list`/`tuple` methods (`l.append(x)`,
 * `l.index(x)`). Each lookup returns a bound function, or undefined when Python has no such method (the
 * lookup then yields an undefined value, as in Jinja2). To add a method, add a `def(...)` line to its table.
 */

import { REQUIRED, splitArgs } from "./args.js";
import { PyError, typeError, valueError } from "./errors.js";
import { defMethod, type Method } from "./method-def.js";
import { isNumeric, numValue } from "./number.js";
import { iterate, pyEq, pyOrder, truthy } from "./ops.js";
import { STR_METHODS } from "./str-methods.js";
import { isDict, isTuple, makeTuple, makeView, type PyDict, pyRepr, pyStr } from "./values.js";

function key(k: unknown): string {
  return pyStr(k);
}

function has(d: PyDict, k: string): boolean {
  return Object.hasOwn(d, k) && d[k] !== undefined;
}

/** `dict.update(other, **kwargs)`: `other` is a mapping or an iterable of pairs. */
function update(d: PyDict, args: unknown[]): null {
  const { positional, kwargs } = splitArgs(args);
  if (positional.length > 1) throw typeError(`update expected at most 1 argument, got ${positional.length}`);
  const [other] = positional;
  if (isDict(other)) Object.assign(d, other);
  else if (other !== undefined) {
    for (const pair of iterate(other)) {
      const kv = iterate(pair);
      if (kv.length !== 2)
        throw valueError(`dictionary update sequence element has length ${kv.length}; 2 is required`);
      d[key(kv[0])] = kv[1];
    }
  }
  for (const [k, v] of kwargs) d[k] = v;
  return null;
}

const def = defMethod<PyDict>;

/** The default of `dict.pop`'s optional argument: none given (then a missing key raises KeyError). */
const MISSING: unique symbol = Symbol("missing");

const DICT_METHODS = new Map<string, Method<PyDict>>([
  def("items", [], (d) =>
    makeView(
      "dict_items",
      Object.entries(d).map((e) => makeTuple(e)),
    ),
  ),
  def("keys", [], (d) => makeView("dict_keys", Object.keys(d))),
  def("values", [], (d) => makeView("dict_values", Object.values(d))),
  def(
    "get",
    [
      ["key", REQUIRED],
      ["default", null],
    ],
    (d, k, dflt) => (has(d, key(k)) ? d[key(k)] : dflt),
  ),
  def(
    "pop",
    [
      ["key", REQUIRED],
      ["default", MISSING],
    ],
    (d, k, dflt) => {
      const name = key(k);
      if (!has(d, name)) {
        if (dflt === MISSING) throw new PyError("KeyError", pyRepr(k));
        return dflt;
      }
      const v = d[name];
      delete d[name];
      return v;
    },
  ),
  def(
    "setdefault",
    [
      ["key", REQUIRED],
      ["default", null],
    ],
    (d, k, dflt) => {
      const name = key(k);
      if (!has(d, name)) d[name] = dflt;
      return d[name];
    },
  ),
  def("update", "*", (d, ...args) => update(d, args)),
  def("copy", [], (d) => ({ ...d })),
  def("clear", [], (d) => {
    for (const k of Object.keys(d)) delete d[k];
    return null;
  }),
]);

const defList = defMethod<unknown[]>;

/** Methods of both lists and tuples. */
const SEQUENCE_METHODS = new Map<string, Method<unknown[]>>([
  defList("count", [["value", REQUIRED]], (l, v) => l.filter((x) => pyEq(x, v)).length),
  defList("index", [["value", REQUIRED]], (l, v) => {
    const i = l.findIndex((x) => pyEq(x, v));
    if (i < 0)
      throw valueError(isTuple(l) ? "tuple.index(x): x not in tuple" : `${pyRepr(v)} is not in list`);
    return i;
  }),
]);

function index(l: unknown[], i: unknown, dflt: number): number {
  if (i === null || i === undefined) return dflt;
  if (!isNumeric(i)) throw typeError(`'${typeof i}' object cannot be interpreted as an integer`);
  const n = numValue(i);
  return n < 0 ? n + l.length : n;
}

/** Methods only lists have (they change the list in place and return None, as in Python). */
const LIST_METHODS = new Map<string, Method<unknown[]>>([
  ...SEQUENCE_METHODS,
  defList("append", [["value", REQUIRED]], (l, v) => {
    l.push(v);
    return null;
  }),
  defList("extend", [["iterable", REQUIRED]], (l, v) => {
    l.push(...iterate(v));
    return null;
  }),
  defList(
    "insert",
    [
      ["index", REQUIRED],
      ["value", REQUIRED],
    ],
    (l, i, v) => {
      l.splice(Math.max(0, Math.min(l.length, index(l, i, 0))), 0, v);
      return null;
    },
  ),
  defList("pop", [["index", null]], (l, i) => {
    if (l.length === 0) throw new PyError("IndexError", "pop from empty list");
    const at = index(l, i, l.length - 1);
    if (at < 0 || at >= l.length) throw new PyError("IndexError", "pop index out of range");
    return l.splice(at, 1)[0];
  }),
  defList("remove", [["value", REQUIRED]], (l, v) => {
    const i = l.findIndex((x) => pyEq(x, v));
    if (i < 0) throw valueError("list.remove(x): x not in list");
    l.splice(i, 1);
    return null;
  }),
  defList("reverse", [], (l) => {
    l.reverse();
    return null;
  }),
  defList("sort", [["reverse", false]], (l, r) => {
    const sign = truthy(r) ? -1 : 1;
    l.sort((a, b) => sign * pyOrder(a, b));
    return null;
  }),
  defList("copy", [], (l) => [...l]),
  defList("clear", [], (l) => {
    l.length = 0;
    return null;
  }),
]);

function bind<T>(
  table: ReadonlyMap<string, Method<T>>,
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
  return bind(isTuple(l) ? SEQUENCE_METHODS : LIST_METHODS, l, name);
}
