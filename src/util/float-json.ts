import { floatRepr } from "../python/number.js";
import { randomId } from "./random-id.js";

/**
 * Keys whose values mini-swe-agent holds as Python floats (dollars: a message's `extra.cost`,
 * `model_stats.instance_cost`, `cost_limit`, `cost_per_call`), so its `json.dumps` writes `1.0` where
 * JavaScript writes `1`.
 */
export const FLOAT_KEYS: ReadonlySet<string> = new Set([
  "cost",
  "instance_cost",
  "cost_limit",
  "cost_per_call",
]);

/** Marks a float in the intermediate text; the nonce keeps any string a user wrote from matching. */
const MARK = `\u0000float-${randomId(12)}:`;
const MARKED = new RegExp(`"${JSON.stringify(MARK).slice(1, -1).replaceAll("\\", "\\\\")}([^"]*)"`, "g");

/**
 * `JSON.stringify(value, null, indent)`, except that a number under one of `FLOAT_KEYS` is written as
 * Python writes a float (`3.0`, `0.0`, `1e+16`), as mini-swe-agent's files have it.
 */
export function jsonWithFloats(value: unknown, indent = 2): string {
  // A string, number or boolean has no keys: JSON's own text (a replacer costs every call its slow path).
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  let marked = false;
  const text = JSON.stringify(
    value,
    (key, item) => {
      if (typeof item !== "number" || !FLOAT_KEYS.has(key) || !Number.isFinite(item)) return item;
      marked = true;
      return `${MARK}${floatRepr(item)}`;
    },
    indent,
  );
  return marked ? text.replace(MARKED, "$1") : text;
}
