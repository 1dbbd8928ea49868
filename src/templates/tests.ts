/**
 * Every Jinja2 builtin test, by name (`x is defined`, `x is divisibleby(3)`, `x is string`, ...). To add
 * a test, add a `[name, fn]` line: to TOLERANT if it must accept an undefined value, else to STRICT.
 * registry.ts turns these into the TESTS map.
 */

import { bindArgs, type Lookup, REQUIRED, type TestFn } from "../python/args.js";
import { Markup } from "../python/markup.js";
import { isFloat, isNumeric, isPyInt, PyFloat } from "../python/number.js";
import { pyCompare, pyContains, pyNumMod } from "../python/ops.js";
import { checkDefined, isUndefined } from "../python/undefined.js";
import { isDict, isStr, pyStr } from "../python/values.js";

function isInteger(x: unknown): boolean {
  return isPyInt(x) && typeof x !== "boolean";
}

function isLower(s: string): boolean {
  return /\p{Ll}/u.test(s) && !/\p{Lu}|\p{Lt}/u.test(s);
}

function isUpper(s: string): boolean {
  return /\p{Lu}|\p{Lt}/u.test(s) && !/\p{Ll}/u.test(s);
}

function compareTest(op: string): TestFn {
  return (value, ...args) => {
    const [other] = bindArgs(op, args, [["other", REQUIRED]]);
    return pyCompare(op, value, other);
  };
}

/** Tests that inspect only the type of their argument and accept undefined values, as in Jinja2. */
const tolerant = (lookup: Lookup): Array<[string, TestFn]> => [
  ["defined", (v) => !isUndefined(v)],
  ["undefined", (v) => isUndefined(v)],
  ["none", (v) => v === null],
  ["boolean", (v) => typeof v === "boolean"],
  ["true", (v) => v === true],
  ["false", (v) => v === false],
  ["integer", (v) => isInteger(v)],
  ["float", (v) => isFloat(v)],
  ["number", (v) => isNumeric(v)],
  ["string", (v) => isStr(v)],
  ["mapping", (v) => isDict(v)],
  ["sequence", (v) => isStr(v) || Array.isArray(v) || isDict(v)],
  ["callable", (v) => typeof v === "function"],
  ["escaped", (v) => v instanceof Markup],
  ["filter", (v) => isStr(v) && lookup.filter(v.toString()) !== undefined],
  ["test", (v) => isStr(v) && lookup.test(v.toString()) !== undefined],
  [
    "sameas",
    (v, ...args) => {
      const [other] = bindArgs("sameas", args, [["other", REQUIRED]]);
      if (v instanceof PyFloat && other instanceof PyFloat) return v.value === other.value;
      return v === other;
    },
  ],
];

const STRICT: ReadonlyArray<[string, TestFn]> = [
  ["odd", (v) => Number(pyNumMod(v, 2)) === 1],
  ["even", (v) => Number(pyNumMod(v, 2)) === 0],
  [
    "divisibleby",
    (v, ...args) => {
      const [num] = bindArgs("divisibleby", args, [["num", REQUIRED]]);
      return Number(pyNumMod(v, num)) === 0;
    },
  ],
  ["iterable", (v) => isStr(checkDefined(v)) || Array.isArray(v) || isDict(v)],
  ["lower", (v) => isLower(pyStr(checkDefined(v)))],
  ["upper", (v) => isUpper(pyStr(checkDefined(v)))],
  [
    "in",
    (v, ...args) => {
      const [seq] = bindArgs("in", args, [["seq", REQUIRED]]);
      return pyContains(seq, v);
    },
  ],
  ["eq", compareTest("==")],
  ["equalto", compareTest("==")],
  ["==", compareTest("==")],
  ["ne", compareTest("!=")],
  ["!=", compareTest("!=")],
  ["lt", compareTest("<")],
  ["lessthan", compareTest("<")],
  ["<", compareTest("<")],
  ["le", compareTest("<=")],
  ["<=", compareTest("<=")],
  ["gt", compareTest(">")],
  ["greaterthan", compareTest(">")],
  [">", compareTest(">")],
  ["ge", compareTest(">=")],
  [">=", compareTest(">=")],
];

/** All builtin tests; `lookup` finds filters and tests by name (for `x is filter`, `x is test`). */
export function builtinTests(lookup: Lookup): Array<[string, TestFn]> {
  return [...tolerant(lookup), ...STRICT];
}
