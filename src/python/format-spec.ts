/**
 * Python's `str.format()` and its format-spec mini-language (`'{:>8.2f}'.format(x)`,
 * `'{name!r:^10}'.format(name=v)`, `'{0[key]}'.format(d)`), for str, int (exact for bigints), float and
 * bool; other values accept only an empty spec (they print with `str()`), as in Python.
 */

import { splitArgs } from "./args.js";
import { PyError, typeError, valueError } from "./errors.js";
import {
  floatRepr,
  formatExp,
  formatFixed,
  isFloat,
  isNumeric,
  isPyInt,
  numValue,
  toBigInt,
} from "./number.js";
import { codePoints, cpLength, toAscii } from "./string.js";
import { checkDefined } from "./undefined.js";
import { isDict, isStr, pyRepr, pyStr, typeName } from "./values.js";

interface Spec {
  fill: string;
  align: string;
  sign: string;
  z: boolean;
  alt: boolean;
  zero: boolean;
  width: number;
  grouping: string;
  precision: number | undefined;
  type: string;
}

const SPEC_RE = /^(?:([\s\S])?([<>=^]))?([-+ ])?(z)?(#)?(0)?(\d+)?([,_])?(?:\.(\d+))?([bcdeEfFgGnosxX%])?$/su;

function parseSpec(text: string): Spec {
  // A fill character may be any code point, including one outside the BMP.
  const cps = codePoints(text);
  const hasFill = cps.length >= 2 && "<>=^".includes(cps[1] ?? "");
  const rest = hasFill ? cps.slice(2).join("") : text;
  const m = SPEC_RE.exec(hasFill ? `x${cps[1]}${rest}` : rest);
  if (!m) throw valueError("Invalid format specifier");
  return {
    fill: hasFill ? (cps[0] ?? " ") : (m[1] ?? ""),
    align: m[2] ?? "",
    sign: m[3] ?? "",
    z: m[4] !== undefined,
    alt: m[5] !== undefined,
    zero: m[6] !== undefined,
    width: m[7] === undefined ? 0 : Number(m[7]),
    grouping: m[8] ?? "",
    precision: m[9] === undefined ? undefined : Number(m[9]),
    type: m[10] ?? "",
  };
}

function group(digits: string, sep: string, every: number): string {
  if (sep === "") return digits;
  let out = "";
  for (let i = digits.length; i > 0; i -= every) {
    const part = digits.slice(Math.max(0, i - every), i);
    out = out === "" ? part : `${part}${sep}${out}`;
  }
  return out;
}

/** Pads `body` (the sign already split off into `sign`) to the spec's width. */
function align(sign: string, body: string, spec: Spec, dfltAlign: string): string {
  const fill = spec.fill || (spec.zero && !spec.align ? "0" : " ");
  const how = spec.align || (spec.zero && dfltAlign === ">" ? "=" : dfltAlign);
  const pad = spec.width - cpLength(sign + body);
  if (pad <= 0) return sign + body;
  if (how === "<") return sign + body + fill.repeat(pad);
  if (how === ">") return fill.repeat(pad) + sign + body;
  if (how === "=") return sign + fill.repeat(pad) + body;
  const left = Math.floor(pad / 2);
  return fill.repeat(left) + sign + body + fill.repeat(pad - left);
}

function signOf(negative: boolean, spec: Spec): string {
  if (negative) return "-";
  return spec.sign === "+" ? "+" : spec.sign === " " ? " " : "";
}

function formatStr(s: string, spec: Spec): string {
  if (spec.type !== "" && spec.type !== "s")
    throw valueError(`Unknown format code '${spec.type}' for object of type 'str'`);
  if (spec.sign) throw valueError("Sign not allowed in string format specifier");
  if (spec.align === "=") throw valueError("'=' alignment not allowed in string format specifier");
  const body = spec.precision === undefined ? s : codePoints(s).slice(0, spec.precision).join("");
  return align("", body, spec, "<");
}

function formatInt(value: number | boolean | bigint, spec: Spec): string {
  const n = toBigInt(value);
  const type = spec.type || "d";
  if (type === "c") {
    if (spec.sign) throw valueError("Sign not allowed with integer format specifier 'c'");
    return align("", String.fromCodePoint(Number(n)), spec, ">");
  }
  if (spec.precision !== undefined) throw valueError("Precision not allowed in integer format specifier");
  const base = { b: 2, o: 8, x: 16, X: 16, d: 10, n: 10 }[type] ?? 10;
  let digits = (n < 0n ? -n : n).toString(base);
  if (type === "X") digits = digits.toUpperCase();
  digits = group(digits, spec.grouping, base === 10 ? 3 : 4);
  const prefix = spec.alt && base !== 10 ? `0${type === "X" ? "X" : type}` : "";
  return alignNumber(signOf(n < 0n, spec) + prefix, digits, spec);
}

/** Zero padding (`{:08,d}`) also fills the grouping, as in Python. */
function alignNumber(sign: string, body: string, spec: Spec): string {
  if (spec.zero && !spec.fill && !spec.align && spec.grouping) {
    const [intPart = "", rest = ""] = splitNumber(body);
    const sep = spec.grouping;
    const every = /^0[xob]/i.test(sign.replace(/^[-+ ]/, "")) ? 4 : 3;
    let digits = intPart.replaceAll(sep, "");
    const target = spec.width - cpLength(sign) - rest.length;
    while (group(digits, sep, every).length < target) digits = `0${digits}`;
    return sign + group(digits, sep, every) + rest;
  }
  return align(sign, body, spec, ">");
}

function splitNumber(body: string): [string, string] {
  const m = /^([0-9a-fA-F,_]*)(.*)$/s.exec(body);
  return [m?.[1] ?? body, m?.[2] ?? ""];
}

function formatFloat(x: number, spec: Spec): string {
  let type = spec.type;
  const negative = x < 0 || (Object.is(x, -0) && !spec.z);
  let v = Math.abs(x);
  let body: string;
  let suffix = "";
  if (type === "%") {
    v *= 100;
    suffix = "%";
    type = "f";
  }
  if (!Number.isFinite(v)) body = Number.isNaN(v) ? "nan" : "inf";
  else if (type === "f" || type === "F") body = formatFixed(v, spec.precision ?? 6);
  else if (type === "e" || type === "E") body = formatExp(v, spec.precision ?? 6);
  else if (type === "g" || type === "G" || type === "n" || (type === "" && spec.precision !== undefined))
    body = generalForm(v, spec.precision ?? 6, spec.alt, type === "");
  else body = floatRepr(v);
  if (spec.alt && !body.includes(".") && /^\d/.test(body) && !/e/.test(body)) body += ".";
  if (type === "F" || type === "E" || type === "G") body = body.toUpperCase();
  const dot = body.search(/[.eE%]/);
  const [intPart, rest] = dot < 0 ? [body, ""] : [body.slice(0, dot), body.slice(dot)];
  const grouped = /^\d+$/.test(intPart) ? group(intPart, spec.grouping, 3) : intPart;
  if (negative && Number(body.replace(/[^0-9.e+-]/g, "")) === 0 && spec.z)
    return alignNumber(signOf(false, spec), grouped + rest + suffix, spec);
  return alignNumber(signOf(negative, spec), grouped + rest + suffix, spec);
}

/**
 * `g`; or with no type and a precision, Python's repr-like form: exponent notation from one power of ten
 * earlier than `g`, and at least one digit after the point in fixed notation.
 */
function generalForm(x: number, precision: number, alt: boolean, noType: boolean): string {
  const p = precision === 0 ? 1 : precision;
  const exp = x === 0 ? 0 : Number(formatExp(x, p - 1).split("e")[1]);
  if (exp >= -4 && exp < (noType ? p - 1 : p)) {
    let s = formatFixed(x, p - 1 - exp);
    if (!alt && s.includes(".")) s = s.replace(/\.?0+$/, "");
    if (noType && !s.includes(".")) s += ".0";
    return s;
  }
  let s = formatExp(x, p - 1);
  if (!alt) s = s.replace(/\.(\d*?)0*e/, (_, kept: string) => (kept ? `.${kept}e` : "e"));
  return s;
}

/** `format(value, spec)`. */
export function formatValue(value: unknown, specText: string): string {
  checkDefined(value);
  if (specText === "") return pyStr(value);
  const spec = parseSpec(specText);
  if (isStr(value)) return formatStr(value.toString(), spec);
  if (isNumeric(value)) {
    const floatType = "eEfFgG%".includes(spec.type) && spec.type !== "";
    if (isPyInt(value) && !isFloat(value) && !floatType) return formatInt(value, spec);
    if ("bcdoxX".includes(spec.type) && spec.type !== "")
      throw valueError(`Unknown format code '${spec.type}' for object of type 'float'`);
    return formatFloat(numValue(value), spec);
  }
  throw typeError(`unsupported format string passed to ${typeName(value)}.__format__`);
}

const FIELD_RE = /\{\{|\}\}|\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}|\{|\}/g;

/** `template.format(*args, **kwargs)`. */
export function strFormat(template: string, args: readonly unknown[]): string {
  const { positional, kwargs } = splitArgs(args);
  let auto = 0;
  let manual = false;
  const lookup = (name: string): unknown => {
    if (name === "") {
      if (manual)
        throw valueError("cannot switch from manual field specification to automatic field numbering");
      name = String(auto++);
    } else if (/^\d+$/.test(name)) {
      if (auto > 0)
        throw valueError("cannot switch from automatic field numbering to manual field specification");
      manual = true;
    }
    if (/^\d+$/.test(name)) {
      const i = Number(name);
      if (i >= positional.length)
        throw new PyError("IndexError", `Replacement index ${i} out of range for positional args tuple`);
      return positional[i];
    }
    if (!kwargs.has(name)) throw new PyError("KeyError", pyRepr(name));
    return kwargs.get(name);
  };
  const field = (text: string): string => {
    const m = /^([^.[!:]*)((?:\.[^.[!:]+|\[[^\]]*\])*)(?:!([rsa]))?(?::([\s\S]*))?$/u.exec(text);
    if (!m) throw valueError("Malformed format string");
    let value = lookup(m[1] ?? "");
    for (const part of (m[2] ?? "").match(/\.[^.[]+|\[[^\]]*\]/g) ?? []) {
      if (part.startsWith(".")) value = attribute(value, part.slice(1));
      else value = item(value, part.slice(1, -1));
    }
    if (m[3] === "r" || m[3] === "a") value = m[3] === "a" ? toAscii(pyRepr(value)) : pyRepr(value);
    else if (m[3] === "s") value = pyStr(checkDefined(value));
    const spec = (m[4] ?? "").replace(/\{([^{}]*)\}/g, (_, inner: string) => field(inner));
    return formatValue(value, spec);
  };
  return template.replace(FIELD_RE, (whole, inner: string | undefined) => {
    if (whole === "{{") return "{";
    if (whole === "}}") return "}";
    if (inner === undefined) {
      throw valueError(
        whole === "{" ? "Single '{' encountered in format string" : "Single '}' encountered in format string",
      );
    }
    return field(inner);
  });
}

function attribute(value: unknown, name: string): unknown {
  const obj = value as Record<string, unknown>;
  if (typeof value === "object" && value !== null && !isDict(value) && !name.startsWith("_") && name in obj)
    return obj[name];
  throw new PyError("AttributeError", `'${typeName(value)}' object has no attribute '${name}'`);
}

function item(value: unknown, key: string): unknown {
  const index = /^\d+$/.test(key) ? Number(key) : undefined;
  if (isDict(value)) {
    if (Object.hasOwn(value, key)) return value[key];
    throw new PyError("KeyError", pyRepr(key));
  }
  if (Array.isArray(value) || isStr(value)) {
    if (index === undefined)
      throw typeError(`${typeName(value)} indices must be integers or slices, not str`);
    const items = Array.isArray(value) ? value : codePoints(value.toString());
    if (index < items.length) return items[index];
    throw new PyError("IndexError", `${typeName(value)} index out of range`);
  }
  throw typeError(`'${typeName(value)}' object is not subscriptable`);
}
