/**
 * Jinja2's `tojson` filter: `htmlsafe_json_dumps`, i.e. Python `json.dumps(value, sort_keys=True,
 * indent=indent)` (ASCII-only output, `", "`/`": "` separators, Python float reprs) with `<`, `>`, `&`
 * and `'` then replaced by `\u003c`, `\u003e`, `\u0026` and `\u0027`.
 */

import { typeError, valueError } from "../python/errors.js";
import { floatRepr, intRepr, isIntNumber, isNumeric, PyFloat } from "../python/number.js";
import { compareCodePoints } from "../python/string.js";
import { isDict, isStr, typeName } from "../python/values.js";

const SHORT_ESCAPES: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
};

/** `json.dumps(str)` with ensure_ascii: everything outside printable ASCII becomes `\uXXXX`. */
function jsonString(s: string): string {
  const body = s.replace(/[\\"]|[^\x20-\x7e]/g, (ch) => {
    return SHORT_ESCAPES[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`;
  });
  return `"${body}"`;
}

function jsonNumber(x: number | boolean | PyFloat | bigint): string {
  if (typeof x === "boolean") return x ? "true" : "false";
  if (typeof x === "bigint") return x.toString();
  const v = typeof x === "number" ? x : x.value;
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "Infinity" : "-Infinity";
  return x instanceof PyFloat || !isIntNumber(v) ? floatRepr(v) : intRepr(v);
}

function dump(value: unknown, indent: string | null, level: number, seen: Set<unknown>): string {
  if (value === null || value === undefined) return "null";
  if (isNumeric(value)) return jsonNumber(value);
  if (isStr(value)) return jsonString(value.toString());
  const isList = Array.isArray(value);
  if (!isList && !isDict(value)) {
    throw typeError(`Object of type ${typeName(value)} is not JSON serializable`);
  }
  if (seen.has(value)) throw valueError("Circular reference detected");
  seen.add(value);
  const items = isList
    ? value.map((v) => dump(v, indent, level + 1, seen))
    : Object.keys(value)
        .sort(compareCodePoints)
        .map((k) => `${jsonString(k)}: ${dump(value[k], indent, level + 1, seen)}`);
  seen.delete(value);
  const [open, close] = isList ? ["[", "]"] : ["{", "}"];
  if (items.length === 0) return open + close;
  if (indent === null) return open + items.join(", ") + close;
  const inner = `\n${indent.repeat(level + 1)}`;
  return `${open}${inner}${items.join(`,${inner}`)}\n${indent.repeat(level)}${close}`;
}

/** `value | tojson(indent)`. */
export function toJson(value: unknown, indent: unknown = null): string {
  let indentText: string | null = null;
  if (typeof indent === "number") indentText = " ".repeat(Math.max(0, indent));
  else if (isStr(indent)) indentText = indent.toString();
  else if (indent !== null && indent !== undefined)
    throw typeError(`indent must be an int or a str, not ${typeName(indent)}`);
  return dump(value, indentText, 0, new Set())
    .replaceAll("<", "\\u003c")
    .replaceAll(">", "\\u003e")
    .replaceAll("&", "\\u0026")
    .replaceAll("'", "\\u0027");
}
