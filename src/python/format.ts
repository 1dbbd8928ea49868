/** Python's printf-style string formatting: `'%s: %5.2f' % (name, value)` and `'%(key)s' % mapping`. */

import { typeError, valueError } from "./errors.js";
import { formatExp, formatFixed, isNumeric, numValue } from "./number.js";
import { codePoints, cpLength, toAscii } from "./string.js";
import { checkDefined } from "./undefined.js";
import { isDict, isStr, isTuple, pyRepr, pyStr, typeName } from "./values.js";

const SPEC_RE = /%(?:\(([^)]*)\))?([#0\- +]*)(\d+)?(?:\.(\d+))?[hlL]?([diouxXeEfFgGcrsa%])?/g;

interface Spec {
  flags: string;
  width: number;
  precision: number | undefined;
  type: string;
}

function pad(body: string, sign: string, spec: Spec, numeric: boolean): string {
  const len = cpLength(sign + body);
  if (len >= spec.width) return sign + body;
  const fill = spec.width - len;
  if (spec.flags.includes("-")) return sign + body + " ".repeat(fill);
  if (numeric && spec.flags.includes("0")) return sign + "0".repeat(fill) + body;
  return " ".repeat(fill) + sign + body;
}

function signOf(negative: boolean, flags: string): string {
  if (negative) return "-";
  if (flags.includes("+")) return "+";
  return flags.includes(" ") ? " " : "";
}

function generalForm(x: number, precision: number, alt: boolean): string {
  const p = precision === 0 ? 1 : precision;
  if (x === 0) return alt ? `0.${"0".repeat(p - 1)}` : "0";
  const exp = Number(x.toExponential(p - 1).split("e")[1]);
  const s = exp >= -4 && exp < p ? formatFixed(x, p - 1 - exp) : formatExp(x, p - 1);
  return alt ? s : stripZeros(s);
}

function stripZeros(s: string): string {
  const e = s.search(/[eE]/);
  const mantissa = e < 0 ? s : s.slice(0, e);
  return (mantissa.includes(".") ? mantissa.replace(/\.?0+$/, "") : mantissa) + (e < 0 ? "" : s.slice(e));
}

function number(value: unknown, type: string): number {
  checkDefined(value);
  if (isNumeric(value)) return numValue(value);
  throw typeError(`%${type} format: a real number is required, not ${typeName(value)}`);
}

function formatOne(value: unknown, spec: Spec): string {
  const { flags, precision, type } = spec;
  switch (type) {
    case "s":
    case "r":
    case "a": {
      const text =
        type === "s" ? pyStr(checkDefined(value)) : type === "a" ? toAscii(pyRepr(value)) : pyRepr(value);
      return pad(
        precision === undefined ? text : codePoints(text).slice(0, precision).join(""),
        "",
        spec,
        false,
      );
    }
    case "c": {
      const ch = isStr(value) ? value.toString() : String.fromCodePoint(number(value, type));
      return pad(ch, "", spec, false);
    }
    case "d":
    case "i":
    case "u":
    case "o":
    case "x":
    case "X": {
      checkDefined(value);
      const n = typeof value === "bigint" ? value : Math.trunc(number(value, type));
      const base = type === "o" ? 8 : type === "x" || type === "X" ? 16 : 10;
      const magnitude = n < 0 ? -n : n;
      let body =
        typeof magnitude === "number" && magnitude >= 1e21
          ? BigInt(magnitude).toString(base)
          : magnitude.toString(base);
      if (precision !== undefined) body = body.padStart(precision, "0");
      if (flags.includes("#") && base !== 10) body = (base === 8 ? "0o" : "0x") + body;
      if (type === "X") body = body.toUpperCase();
      return pad(body, signOf(n < 0, flags), spec, true);
    }
    default: {
      const x = number(value, type);
      const p = precision ?? 6;
      const upper = type === type.toUpperCase();
      let body: string;
      if (!Number.isFinite(x)) body = Number.isNaN(x) ? "nan" : "inf";
      else if (type === "f" || type === "F") body = formatFixed(Math.abs(x), p);
      else if (type === "e" || type === "E") body = formatExp(Math.abs(x), p);
      else body = generalForm(Math.abs(x), p, flags.includes("#"));
      if (upper) body = body.toUpperCase();
      return pad(body, signOf(x < 0 || Object.is(x, -0), flags), spec, Number.isFinite(x));
    }
  }
}

/** `fmt % args`. */
export function percentFormat(fmt: string, args: unknown): string {
  checkDefined(args);
  const mapping = isDict(args) ? args : undefined;
  const positional = isTuple(args) ? (args as unknown[]) : [args];
  let next = 0;
  let usedMapping = false;
  const out = fmt.replace(
    SPEC_RE,
    (whole, key: string | undefined, flags: string, width, precision, type) => {
      if (type === undefined) throw valueError(`unsupported format character at '${whole}'`);
      if (type === "%" && key === undefined) return "%";
      let value: unknown;
      if (key !== undefined) {
        if (!mapping) throw typeError("format requires a mapping");
        if (!Object.hasOwn(mapping, key)) throw new Error(`KeyError: ${pyRepr(key)}`);
        value = mapping[key];
        usedMapping = true;
      } else {
        if (next >= positional.length) throw typeError("not enough arguments for format string");
        value = positional[next++];
      }
      const spec = {
        flags,
        width: width === undefined ? 0 : Number(width),
        precision: precision === undefined ? undefined : Number(precision),
        type,
      };
      return formatOne(value, spec);
    },
  );
  if (!usedMapping && !mapping && next < positional.length) {
    throw typeError("not all arguments converted during string formatting");
  }
  return out;
}
