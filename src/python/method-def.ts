/** How the Python method tables (py-str-methods.ts, py-methods.ts) declare a method. */

import { bindArgs, type ParamSpec } from "./args.js";
import { checkDefined } from "./undefined.js";

/** A method implementation: the receiver and the call's arguments (keywords last, as nunjucks passes them). */
export type Method<T> = (self: T, args: unknown[]) => unknown;

/**
 * Declares method `name` with a Python signature (`[["sep", null], ["maxsplit", -1]]`, or `"*"` for
 * `*args, **kwargs` passed through unbound); arguments are checked for undefined values first.
 */
export function defMethod<T>(
  name: string,
  params: ParamSpec | "*",
  f: (self: T, ...args: unknown[]) => unknown,
): [string, Method<T>] {
  if (params === "*") return [name, (self, args) => f(self, ...args.map(checkDefined))];
  return [name, (self, args) => f(self, ...bindArgs(name, args.map(checkDefined), params))];
}
