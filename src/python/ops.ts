/**
 * Python operators on template values: truth, equality, ordering, arithmetic, `~`, `in`, `len()`,
 * iteration and slicing. Every operation rejects StrictUndefined operands like Jinja2 does.
 */

import { PyError, typeError, valueError } from "./errors.js";
import { Markup, markupConcat } from "./markup.js";
import { intOp, isFloat, isNumeric, isPyInt, mkNum, numValue, PyFloat, toBigInt } from "./number.js";
import { codePoints, compareCodePoints, cpLength, cpSubstring, hasSurrogates } from "./string.js";
import { checkDefined, isUndefined } from "./undefined.js";
import { isDict, isStr, isTuple, makeTuple, pyStr, typeName } from "./values.js";

/** `bool(x)`. */
export function truthy(x: unknown): boolean {
  if (typeof x === "boolean") return x;
  if (typeof x === "string") return x.length > 0;
  if (typeof x === "number") return x !== 0;
  if (typeof x === "bigint") return x !== 0n;
  if (x === null || x === undefined) return false;
  if (isUndefined(x)) x.fail();
  if (x instanceof PyFloat) return x.value !== 0;
  if (x instanceof String) return x.length > 0;
  if (Array.isArray(x)) return x.length > 0;
  if (isDict(x)) return Object.keys(x).length > 0;
  return true;
}

/** `a == b`. */
export function pyEq(a: unknown, b: unknown): boolean {
  checkDefined(a);
  checkDefined(b);
  if (a === b) return true;
  if (isNumeric(a) && isNumeric(b)) return numCompare(a, b) === 0;
  if (isStr(a) && isStr(b)) return a.toString() === b.toString();
  if ((a === null || a === undefined) && (b === null || b === undefined)) return true;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (isTuple(a) !== isTuple(b) || a.length !== b.length) return false;
    return a.every((item, i) => pyEq(item, b[i]));
  }
  if (isDict(a) && isDict(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((k) => Object.hasOwn(b, k) && pyEq(a[k], b[k]));
  }
  return false;
}

function numCompare(a: number | boolean | bigint | PyFloat, b: number | boolean | bigint | PyFloat): number {
  if ((typeof a === "bigint" || typeof b === "bigint") && isPyInt(a) && isPyInt(b)) {
    const x = toBigInt(a);
    const y = toBigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  const x = numValue(a);
  const y = numValue(b);
  return x < y ? -1 : x > y ? 1 : x === y ? 0 : Number.NaN;
}

/** Python ordering: negative, zero or positive; TypeError for values Python cannot order. */
export function pyOrder(a: unknown, b: unknown, op = "<"): number {
  checkDefined(a);
  checkDefined(b);
  if (isNumeric(a) && isNumeric(b)) return numCompare(a, b);
  if (isStr(a) && isStr(b)) return compareCodePoints(a.toString(), b.toString());
  if (Array.isArray(a) && Array.isArray(b) && isTuple(a) === isTuple(b)) {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
      if (!pyEq(a[i], b[i])) return pyOrder(a[i], b[i], op);
    }
    return a.length - b.length;
  }
  throw typeError(`'${op}' not supported between instances of '${typeName(a)}' and '${typeName(b)}'`);
}

export function pyCompare(op: string, a: unknown, b: unknown): boolean {
  switch (op) {
    case "==":
      return pyEq(a, b);
    case "!=":
      return !pyEq(a, b);
    case "<":
      return pyOrder(a, b, op) < 0;
    case ">":
      return pyOrder(a, b, op) > 0;
    case "<=":
      return pyOrder(a, b, op) <= 0;
    case ">=":
      return pyOrder(a, b, op) >= 0;
    default:
      throw typeError(`unknown comparison operator ${op}`);
  }
}

function unsupported(op: string, a: unknown, b: unknown): never {
  throw typeError(`unsupported operand type(s) for ${op}: '${typeName(a)}' and '${typeName(b)}'`);
}

const isInt = isPyInt;

/** `a + b`, `a - b`, `a * b` on numbers: exact on ints (bigint beyond 2**53), float otherwise. */
function arith(
  a: number | boolean | bigint | PyFloat,
  b: number | boolean | bigint | PyFloat,
  f: (x: number, y: number) => number,
  big: (x: bigint, y: bigint) => bigint,
): number | bigint | PyFloat {
  if (isInt(a) && isInt(b)) return intOp(a, b, f, big);
  return mkNum(f(numValue(a), numValue(b)), true);
}

export function pyAdd(a: unknown, b: unknown): unknown {
  checkDefined(a);
  checkDefined(b);
  if (isNumeric(a) && isNumeric(b))
    return arith(
      a,
      b,
      (x, y) => x + y,
      (x, y) => x + y,
    );
  if (isStr(a)) {
    if ((a as unknown) instanceof Markup || (b as unknown) instanceof Markup) {
      if (isStr(b)) return markupConcat(a, b);
    } else if (isStr(b)) return a.toString() + b.toString();
    throw typeError(`can only concatenate str (not "${typeName(b)}") to str`);
  }
  if (Array.isArray(a) && Array.isArray(b) && isTuple(a) === isTuple(b)) {
    const out = [...a, ...b];
    return isTuple(a) ? makeTuple(out) : out;
  }
  if (Array.isArray(a) && !isTuple(a))
    throw typeError(`can only concatenate list (not "${typeName(b)}") to list`);
  return unsupported("+", a, b);
}

export function pySub(a: unknown, b: unknown): unknown {
  checkDefined(a);
  checkDefined(b);
  if (!isNumeric(a) || !isNumeric(b)) unsupported("-", a, b);
  return arith(
    a,
    b,
    (x, y) => x - y,
    (x, y) => x - y,
  );
}

export function pyMul(a: unknown, b: unknown): unknown {
  checkDefined(a);
  checkDefined(b);
  if (isNumeric(a) && isNumeric(b))
    return arith(
      a,
      b,
      (x, y) => x * y,
      (x, y) => x * y,
    );
  const [seq, times] = isInt(b) ? [a, b] : [b, a];
  if (isInt(times) && (isStr(seq) || Array.isArray(seq))) {
    const n = Math.max(0, numValue(times));
    if (isStr(seq)) return seq.toString().repeat(n);
    const out: unknown[] = [];
    for (let i = 0; i < n; i++) out.push(...seq);
    return isTuple(seq) ? makeTuple(out) : out;
  }
  if (isStr(a) || Array.isArray(a))
    throw typeError(`can't multiply sequence by non-int of type '${typeName(b)}'`);
  return unsupported("*", a, b);
}

function checkDivisor(b: unknown, message: string): void {
  if (isNumeric(b) && numValue(b) === 0) throw new PyError("ZeroDivisionError", message);
}

export function pyDiv(a: unknown, b: unknown): unknown {
  checkDefined(a);
  checkDefined(b);
  if (!isNumeric(a) || !isNumeric(b)) unsupported("/", a, b);
  checkDivisor(b, "division by zero");
  return mkNum(numValue(a) / numValue(b), true);
}

export function pyFloorDiv(a: unknown, b: unknown): unknown {
  checkDefined(a);
  checkDefined(b);
  if (!isNumeric(a) || !isNumeric(b)) unsupported("//", a, b);
  checkDivisor(b, "integer division or modulo by zero");
  if (isInt(a) && isInt(b))
    return intOp(
      a,
      b,
      (x, y) => Math.floor(x / y),
      (x, y) => {
        const q = x / y;
        return x % y !== 0n && x < 0n !== y < 0n ? q - 1n : q;
      },
    );
  return mkNum(Math.floor(numValue(a) / numValue(b)), true);
}

/** Numeric `a % b` (the sign follows the divisor, as in Python); string formatting is handled elsewhere. */
export function pyNumMod(a: unknown, b: unknown): unknown {
  checkDefined(a);
  checkDefined(b);
  if (!isNumeric(a) || !isNumeric(b)) unsupported("%", a, b);
  checkDivisor(b, "integer division or modulo by zero");
  if (isInt(a) && isInt(b))
    return intOp(
      a,
      b,
      (x, y) => floorMod(x, y),
      (x, y) => {
        const r = x % y;
        return r !== 0n && r < 0n !== y < 0n ? r + y : r;
      },
    );
  return mkNum(floorMod(numValue(a), numValue(b)), true);
}

function floorMod(x: number, y: number): number {
  const r = x % y;
  return r !== 0 && r < 0 !== y < 0 ? r + y : r;
}

export function pyPow(a: unknown, b: unknown): unknown {
  checkDefined(a);
  checkDefined(b);
  if (!isNumeric(a) || !isNumeric(b)) unsupported("** or pow()", a, b);
  const y = numValue(b);
  if (isInt(a) && isInt(b) && y >= 0)
    return intOp(
      a,
      b,
      // Only small powers are exact as JS numbers; the rest are computed on bigints.
      (p, q) => (Math.abs(p ** q) < 2 ** 31 ? p ** q : Number.NaN),
      (p, q) => p ** q,
    );
  return mkNum(numValue(a) ** y, true);
}

export function pyNeg(a: unknown): unknown {
  checkDefined(a);
  if (!isNumeric(a)) throw typeError(`bad operand type for unary -: '${typeName(a)}'`);
  if (typeof a === "bigint")
    return intOp(
      0,
      a,
      (x, y) => x - y,
      (x, y) => x - y,
    );
  const v = -numValue(a);
  return isFloat(a) ? mkNum(v, true) : v === 0 ? 0 : v;
}

export function pyPos(a: unknown): unknown {
  checkDefined(a);
  if (!isNumeric(a)) throw typeError(`bad operand type for unary +: '${typeName(a)}'`);
  return typeof a === "boolean" ? numValue(a) : a;
}

/** `a ~ b`. */
export function pyConcat(a: unknown, b: unknown): string {
  return pyStr(checkDefined(a)) + pyStr(checkDefined(b));
}

/** `item in container`. */
export function pyContains(container: unknown, item: unknown): boolean {
  checkDefined(container);
  checkDefined(item);
  if (isStr(container)) {
    if (!isStr(item)) throw typeError(`'in <string>' requires string as left operand, not ${typeName(item)}`);
    return container.toString().includes(item.toString());
  }
  if (Array.isArray(container)) return container.some((x) => pyEq(x, item));
  if (isDict(container)) return isStr(item) && Object.hasOwn(container, item.toString());
  throw typeError(`argument of type '${typeName(container)}' is not iterable`);
}

/** `len(x)`, counting code points for strings. */
export function pyLen(x: unknown): number {
  checkDefined(x);
  if (typeof x === "string") return cpLength(x);
  if (x instanceof String) return cpLength(x.toString());
  if (Array.isArray(x)) return x.length;
  if (isDict(x)) return Object.keys(x).length;
  throw typeError(`object of type '${typeName(x)}' has no len()`);
}

/** `list(iter(x))`: strings give code points, dicts give keys. */
export function iterate(x: unknown): unknown[] {
  checkDefined(x);
  if (Array.isArray(x)) return x;
  if (isStr(x)) return codePoints(x.toString());
  if (isDict(x)) return Object.keys(x);
  if (typeof x === "object" && x !== null && Symbol.iterator in x) return Array.from(x as Iterable<unknown>);
  throw typeError(`'${typeName(x)}' object is not iterable`);
}

function sliceIndex(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  checkDefined(v);
  if (!isInt(v)) throw typeError("slice indices must be integers or None or have an __index__ method");
  return numValue(v);
}

/** `slice(start, stop, step).indices(length)`. */
function sliceBounds(
  length: number,
  start0: unknown,
  stop0: unknown,
  step0: unknown,
): [number, number, number] {
  const step = sliceIndex(step0) ?? 1;
  if (step === 0) throw valueError("slice step cannot be zero");
  const clamp = (v: number | null, dflt: number): number => {
    if (v === null) return dflt;
    if (v < 0) return Math.max(v + length, step < 0 ? -1 : 0);
    return Math.min(v, step < 0 ? length - 1 : length);
  };
  return [
    clamp(sliceIndex(start0), step < 0 ? length - 1 : 0),
    clamp(sliceIndex(stop0), step < 0 ? -1 : length),
    step,
  ];
}

function pick<T>(items: ArrayLike<T>, [start, stop, step]: [number, number, number]): T[] {
  const out: T[] = [];
  if (step > 0) for (let i = start; i < stop; i += step) out.push(items[i] as T);
  else for (let i = start; i > stop; i += step) out.push(items[i] as T);
  return out;
}

/** `obj[start:stop:step]` on strings (by code point), lists and tuples. */
export function pySlice(obj: unknown, start: unknown, stop: unknown, step: unknown): unknown {
  checkDefined(obj);
  if (isStr(obj)) {
    const s = obj.toString();
    if (!hasSurrogates(s)) {
      const bounds = sliceBounds(s.length, start, stop, step);
      if (bounds[2] === 1) return bounds[0] < bounds[1] ? s.slice(bounds[0], bounds[1]) : "";
      return pick(s, bounds).join("");
    }
    const bounds = sliceBounds(cpLength(s), start, stop, step);
    if (bounds[2] === 1) return bounds[0] < bounds[1] ? cpSubstring(s, bounds[0], bounds[1]) : "";
    return pick(codePoints(s), bounds).join("");
  }
  if (Array.isArray(obj)) {
    const out = pick(obj, sliceBounds(obj.length, start, stop, step));
    return isTuple(obj) ? makeTuple(out) : out;
  }
  throw typeError(`'${typeName(obj)}' object is not subscriptable`);
}
