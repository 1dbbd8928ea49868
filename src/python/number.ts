/**
 * Python numbers in JS. A Python `int` is a JS number when it is a safe integer (|x| < 2**53) and a
 * `bigint` beyond that (`2 ** 64` prints all its digits, as in Python); ints are kept in that normal form
 * by `normInt`. Any other JS number stands for a `float` (a large JS number from the variables, like
 * `1e21`, is a float); a float whose value happens to be integral (`4 / 2`, `3 | float`, the literal `1.0`)
 * is boxed in a `PyFloat` so that it prints as `2.0` like Python. Booleans count as ints in arithmetic.
 */

export class PyFloat {
  constructor(readonly value: number) {}
  valueOf(): number {
    return this.value;
  }
  toString(): string {
    return floatRepr(this.value);
  }
}

export type PyNumeric = number | boolean | PyFloat | bigint;

/** Whether a JS number stands for a Python int. */
export function isIntNumber(x: number): boolean {
  return Number.isSafeInteger(x);
}

export function isNumeric(x: unknown): x is PyNumeric {
  return typeof x === "number" || typeof x === "boolean" || x instanceof PyFloat || typeof x === "bigint";
}

/** The value as a JS number (a bigint beyond 2**53 is rounded; use `toBigInt` for exact int arithmetic). */
export function numValue(x: PyNumeric): number {
  if (typeof x === "number") return x;
  if (typeof x === "boolean") return x ? 1 : 0;
  if (typeof x === "bigint") return Number(x);
  return x.value;
}

/** Whether a numeric value is a Python float (as opposed to an int or a bool). */
export function isFloat(x: unknown): boolean {
  return x instanceof PyFloat || (typeof x === "number" && !isIntNumber(x));
}

/** Whether a value is a Python int or bool. */
export function isPyInt(x: unknown): x is number | boolean | bigint {
  return typeof x === "boolean" || typeof x === "bigint" || (typeof x === "number" && isIntNumber(x));
}

/** An int or bool as a bigint. */
export function toBigInt(x: number | boolean | bigint): bigint {
  return typeof x === "bigint" ? x : BigInt(typeof x === "boolean" ? Number(x) : x);
}

/** An int in normal form: a JS number when it is safe, a bigint otherwise. */
export function normInt(x: bigint): number | bigint {
  return x >= -MAX_SAFE && x <= MAX_SAFE ? Number(x) : x;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Exact int arithmetic: `small` on JS numbers when the result stays a safe integer, otherwise `big`
 * on bigints.
 */
export function intOp(
  a: number | boolean | bigint,
  b: number | boolean | bigint,
  small: (x: number, y: number) => number,
  big: (x: bigint, y: bigint) => bigint,
): number | bigint {
  if (typeof a !== "bigint" && typeof b !== "bigint") {
    const r = small(Number(a), Number(b));
    if (Number.isSafeInteger(r)) return r === 0 ? 0 : r;
  }
  return normInt(big(toBigInt(a), toBigInt(b)));
}

/** Makes a Python number: a float when `float` is set (boxed when integral), an int otherwise. */
export function mkNum(value: number, float: boolean): number | PyFloat {
  if (float && isIntNumber(value)) return new PyFloat(value);
  return value;
}

/** `str(int)`: all digits, never exponent notation. */
export function intRepr(value: number): string {
  return Object.is(value, -0) ? "0" : String(value);
}

/** `repr(float)`: the shortest round-tripping digits, in Python's layout. */
export function floatRepr(value: number): string {
  if (Number.isNaN(value)) return "nan";
  if (value === Number.POSITIVE_INFINITY) return "inf";
  if (value === Number.NEGATIVE_INFINITY) return "-inf";
  if (value === 0) return Object.is(value, -0) ? "-0.0" : "0.0";
  const sign = value < 0 ? "-" : "";
  // toExponential() without an argument gives the shortest digits that round-trip, like Python's repr.
  const [mantissa = "", expText = "0"] = Math.abs(value).toExponential().split("e");
  const digits = mantissa.replace(".", "");
  const exp = Number(expText);
  if (exp < -4 || exp >= 16) {
    const frac = digits.length > 1 ? `.${digits.slice(1)}` : "";
    const expAbs = String(Math.abs(exp)).padStart(2, "0");
    return `${sign}${digits[0]}${frac}e${exp < 0 ? "-" : "+"}${expAbs}`;
  }
  if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
  const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
  const fracPart = digits.slice(exp + 1);
  return `${sign}${intPart}.${fracPart === "" ? "0" : fracPart}`;
}

/** `str()` of a Python number. */
export function numberRepr(x: PyNumeric): string {
  if (typeof x === "boolean") return x ? "True" : "False";
  if (typeof x === "bigint") return x.toString();
  if (x instanceof PyFloat) return floatRepr(x.value);
  return isIntNumber(x) ? intRepr(x) : floatRepr(x);
}

/**
 * `'%.{digits}f' % value`: the exact binary value rounded half-to-even, as Python does (JS `toFixed`
 * rounds exact ties away from zero).
 */
export function formatFixed(value: number, digits: number): string {
  if (!Number.isFinite(value)) return floatRepr(value);
  // Floats this large are integers; BigInt prints all their digits (toFixed would switch to `1e+21`).
  if (Math.abs(value) >= 1e21) return BigInt(value).toString() + (digits > 0 ? `.${"0".repeat(digits)}` : "");
  if (digits > 100) return value.toFixed(100) + "0".repeat(digits - 100);
  const plain = value.toFixed(digits);
  const extended = value.toFixed(Math.min(100, digits + 60));
  const dot = extended.indexOf(".");
  const rest = dot < 0 ? "" : extended.slice(dot + 1 + digits);
  if (!/^50*$/.test(rest)) return plain;
  // An exact tie: truncate, then round up only if the last kept digit is odd.
  const truncated = digits === 0 ? extended.slice(0, dot) : extended.slice(0, dot + 1 + digits);
  const lastDigit = Number(truncated[truncated.length - 1]);
  if (lastDigit % 2 === 0) return truncated === "-0" ? "-0" : truncated;
  return plain;
}

/**
 * `'%.{digits}e' % value`: `1.235e+04`, with the exact binary value rounded half-to-even as Python does
 * (JS `toExponential` rounds exact ties up).
 */
export function formatExp(value: number, digits: number): string {
  const d = Math.min(digits, 100);
  let text = value.toExponential(d);
  const extended = value.toExponential(Math.min(100, d + 40));
  const [mantissa = "", exp = ""] = extended.split("e");
  const kept = mantissa.replace("-", "").replace(".", "");
  if (/^50*$/.test(kept.slice(d + 1)) && Number(kept[d]) % 2 === 0) {
    const sign = value < 0 ? "-" : "";
    text = `${sign}${kept[0]}${d > 0 ? `.${kept.slice(1, d + 1)}` : ""}e${exp}`;
  }
  const [m = "", e = "0"] = text.split("e");
  const n = Number(e);
  return `${m}e${n < 0 ? "-" : "+"}${String(Math.abs(n)).padStart(2, "0")}`;
}

/** Python's `round(x, ndigits)` for a float: round half to even on the exact value. */
export function roundHalfEven(value: number, ndigits: number): number {
  if (!Number.isFinite(value)) return value;
  if (ndigits >= 0) return Number(formatFixed(value, ndigits));
  const factor = 10 ** -ndigits;
  const scaled = value / factor;
  const floor = Math.floor(scaled);
  const diff = scaled - floor;
  let rounded = diff > 0.5 ? floor + 1 : diff < 0.5 ? floor : floor % 2 === 0 ? floor : floor + 1;
  if (Object.is(rounded, -0)) rounded = 0;
  return rounded * factor;
}

const PY_INT_RE = /^[+-]?(\d+(?:_\d+)*)$/;
const PY_INT_PREFIXED: Record<number, RegExp> = {
  2: /^[+-]?(?:0[bB])?_?([01]+(?:_[01]+)*)$/,
  8: /^[+-]?(?:0[oO])?_?([0-7]+(?:_[0-7]+)*)$/,
  16: /^[+-]?(?:0[xX])?_?([0-9a-fA-F]+(?:_[0-9a-fA-F]+)*)$/,
};

/** Python `int(text, base)` for bases 2, 8, 10 and 16; null when Python would raise ValueError. */
export function parsePyInt(text: string, base: number, strip: (s: string) => string): number | bigint | null {
  const s = strip(text);
  const re = base === 10 ? PY_INT_RE : PY_INT_PREFIXED[base];
  if (re === undefined) return null;
  const m = re.exec(s);
  if (!m || m[1] === undefined) return null;
  const digits = m[1].replaceAll("_", "");
  const n = Number.parseInt(digits, base);
  if (!Number.isSafeInteger(n)) {
    const prefix = base === 16 ? "0x" : base === 8 ? "0o" : base === 2 ? "0b" : "";
    const big = BigInt(prefix + digits);
    return normInt(s.startsWith("-") ? -big : big);
  }
  return s.startsWith("-") ? -n : n;
}

const PY_FLOAT_RE = /^[+-]?(?:(?:\d+(?:_\d+)*)?\.?\d+(?:_\d+)*(?:[eE][+-]?\d+(?:_\d+)*)?|\d+(?:_\d+)*\.)$/;
const PY_FLOAT_SPECIAL_RE = /^([+-]?)(inf|infinity|nan)$/i;

/** Python `float(text)`; null when Python would raise ValueError. */
export function parsePyFloat(text: string, strip: (s: string) => string): number | null {
  const s = strip(text);
  const special = PY_FLOAT_SPECIAL_RE.exec(s);
  if (special) {
    if (special[2]?.toLowerCase() === "nan") return Number.NaN;
    return special[1] === "-" ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  if (!PY_FLOAT_RE.test(s)) return null;
  return Number(s.replaceAll("_", ""));
}
