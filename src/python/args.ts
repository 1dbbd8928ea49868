/**
 * Python-style argument binding for filters, tests and methods called from templates. nunjucks passes
 * keyword arguments as a trailing object marked with an own `__keywords` property.
 */

import { typeError } from "./errors.js";

/** A filter: the value left of `|`, then the call's arguments (keywords last, see `splitArgs`). */
export type FilterFn = (value: unknown, ...args: unknown[]) => unknown;

/** A test: the value left of `is`, then the test's arguments. */
export type TestFn = (value: unknown, ...args: unknown[]) => boolean;

/** Finds filters and tests by name, for the filters and tests that take another one's name (`map`, `select`). */
export interface Lookup {
  filter(name: string): FilterFn | undefined;
  test(name: string): TestFn | undefined;
}

export const REQUIRED: unique symbol = Symbol("required");

export type ParamSpec = ReadonlyArray<readonly [name: string, dflt: unknown]>;

function isKeywordArgs(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && Object.hasOwn(x, "__keywords");
}

export function splitArgs(args: readonly unknown[]): { positional: unknown[]; kwargs: Map<string, unknown> } {
  const last = args[args.length - 1];
  if (!isKeywordArgs(last)) return { positional: [...args], kwargs: new Map() };
  const kwargs = new Map<string, unknown>();
  for (const [k, v] of Object.entries(last)) if (k !== "__keywords") kwargs.set(k, v);
  return { positional: args.slice(0, -1), kwargs };
}

/** Binds positional and keyword arguments to `params` like a Python signature; returns the values. */
export function bindArgs(fname: string, args: readonly unknown[], params: ParamSpec): unknown[] {
  const { positional, kwargs } = splitArgs(args);
  if (positional.length > params.length) {
    throw typeError(`${fname}() takes at most ${params.length} argument(s) (${positional.length} given)`);
  }
  const out = params.map(([name, dflt], i) => {
    if (i < positional.length) {
      if (kwargs.has(name)) throw typeError(`${fname}() got multiple values for argument '${name}'`);
      return positional[i];
    }
    if (kwargs.has(name)) {
      const v = kwargs.get(name);
      kwargs.delete(name);
      return v;
    }
    if (dflt === REQUIRED) throw typeError(`${fname}() missing required argument: '${name}'`);
    return dflt;
  });
  for (const name of kwargs.keys())
    throw typeError(`${fname}() got an unexpected keyword argument '${name}'`);
  return out;
}
