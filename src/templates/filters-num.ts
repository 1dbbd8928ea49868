/** Jinja2's number filters: `int`, `float`, `round`, `abs` and `filesizeformat`. */

import { PyError, typeError } from "../python/errors.js";
import {
  formatFixed,
  isFloat,
  isNumeric,
  mkNum,
  normInt,
  numValue,
  PyFloat,
  parsePyFloat,
  parsePyInt,
  roundHalfEven,
} from "../python/number.js";
import { pyStrip } from "../python/string.js";
import { isStr, typeName } from "../python/values.js";

const strip = (s: string): string => pyStrip(s);

export function toInt(value: unknown, dflt: unknown, base: unknown): unknown {
  if (isStr(value)) {
    const b = isNumeric(base) ? numValue(base) : 10;
    const i = parsePyInt(value.toString(), b, strip);
    if (i !== null) return i;
    const n = parsePyFloat(value.toString(), strip);
    return n === null || !Number.isFinite(n) ? dflt : truncToInt(n);
  }
  if (typeof value === "bigint") return value;
  if (isNumeric(value)) {
    const v = numValue(value);
    return Number.isFinite(v) ? truncToInt(v) : dflt;
  }
  return dflt;
}

/** Python's `int(x)` of a finite float: all its digits (a bigint beyond 2**53), never `1e+16`. */
function truncToInt(x: number): number | bigint {
  const t = Math.trunc(x) || 0;
  return Number.isSafeInteger(t) ? t : normInt(BigInt(t));
}

export function toFloat(value: unknown, dflt: unknown): unknown {
  if (isNumeric(value)) return new PyFloat(numValue(value));
  if (isStr(value)) {
    const n = parsePyFloat(value.toString(), strip);
    return n === null ? dflt : new PyFloat(n);
  }
  return dflt;
}

export function round(value: unknown, precision: unknown, method: unknown): unknown {
  if (method !== "common" && method !== "ceil" && method !== "floor") {
    throw new PyError("FilterArgumentError", "method must be common, ceil or floor");
  }
  if (!isNumeric(value)) throw typeError(`type ${typeName(value)} doesn't define __round__ method`);
  if (!isNumeric(precision))
    throw typeError(`'${typeName(precision)}' object cannot be interpreted as an integer`);
  const p = numValue(precision);
  if (typeof value === "bigint" && p >= 0) return value;
  const v = numValue(value);
  if (method === "common") return mkNum(roundHalfEven(v, p), isFloat(value));
  const factor = 10 ** p;
  return new PyFloat((method === "ceil" ? Math.ceil(v * factor) : Math.floor(v * factor)) / factor);
}

export function abs(v: unknown): unknown {
  if (typeof v === "bigint") return v < 0n ? -v : v;
  if (!isNumeric(v)) throw typeError(`bad operand type for abs(): '${typeName(v)}'`);
  return mkNum(Math.abs(numValue(v)), isFloat(v));
}

const DECIMAL_UNITS = ["kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"];
const BINARY_UNITS = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"];

/** `filesizeformat`: `13 Bytes`, `1.5 kB` (powers of 1000), or `1.5 KiB` (powers of 1024) when `binary`. */
export function filesizeformat(value: unknown, binary: boolean): string {
  const bytes = toFloatStrict(value);
  const base = binary ? 1024 : 1000;
  const units = binary ? BINARY_UNITS : DECIMAL_UNITS;
  if (bytes === 1) return "1 Byte";
  if (bytes < base) return `${Math.trunc(bytes)} Bytes`;
  let i = 0;
  let unit = base * base;
  while (i < units.length - 1 && bytes >= unit) {
    i++;
    unit *= base;
  }
  return `${formatFixed((base * bytes) / unit, 1)} ${units[i]}`;
}

/** Python's `float(value)`, raising like it. */
function toFloatStrict(value: unknown): number {
  if (isNumeric(value)) return numValue(value);
  if (isStr(value)) {
    const n = parsePyFloat(value.toString(), strip);
    if (n !== null) return n;
    throw new PyError("ValueError", `could not convert string to float: '${value.toString()}'`);
  }
  throw typeError(`float() argument must be a string or a real number, not '${typeName(value)}'`);
}
