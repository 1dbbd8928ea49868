/**
 * Jinja2's attribute and item lookup (`x.name` tries the attribute, then the item; `x[key]` the item,
 * then the attribute). A failed lookup yields an undefined value whose message names the object type,
 * e.g. `'dict object' has no attribute 'nope'` or `list object has no element 5`.
 */

import { dictMethod, listMethod, strMethod } from "./methods.js";
import { Namespace } from "./namespace.js";
import { isNumeric, numValue } from "./number.js";
import { codePoints, hasSurrogates, strRepr } from "./string.js";
import { checkDefined, JinjaUndefined } from "./undefined.js";
import { isDict, isStr, namedField, objectTypeRepr, pyRepr, viewKind } from "./values.js";

function missing(obj: unknown, name: unknown): JinjaUndefined {
  return new JinjaUndefined(() =>
    typeof name === "string"
      ? `${strRepr(objectTypeRepr(obj))} has no attribute ${strRepr(name)}`
      : `${objectTypeRepr(obj)} has no element ${pyRepr(name)}`,
  );
}

function present(value: unknown, obj: unknown, name: unknown): unknown {
  return value === undefined ? missing(obj, name) : value;
}

/** Attributes of objects that are neither dicts nor builtin values (e.g. `loop`). */
function objectAttr(obj: object, name: string): unknown {
  if (!(name in obj) || name in Object.prototype || name.startsWith("_")) return undefined;
  const v = (obj as Record<string, unknown>)[name];
  return typeof v === "function" ? v.bind(obj) : v;
}

/** `obj.name`. */
export function pyGetattr(obj: unknown, name: string): unknown {
  checkDefined(obj);
  if (obj === null || obj === undefined) return missing(null, name);
  if (isStr(obj)) return present(strMethod(obj.toString(), name), obj, name);
  if (Array.isArray(obj)) return present(namedField(obj, name) ?? listMethod(obj, name), obj, name);
  if (isDict(obj))
    return present(dictMethod(obj, name) ?? (Object.hasOwn(obj, name) ? obj[name] : undefined), obj, name);
  if (obj instanceof Namespace)
    return present(Object.hasOwn(obj.attrs, name) ? obj.attrs[name] : undefined, obj, name);
  if (typeof obj === "object") return present(objectAttr(obj, name), obj, name);
  return missing(obj, name);
}

/**
 * Python's `getattr(obj, name)` alone, as the `attr` filter does it: a dict's keys are items, not
 * attributes, so `{'a': 1} | attr('a')` is undefined while `attr('items')` is the method.
 */
export function pyAttribute(obj: unknown, name: string): unknown {
  if (isDict(obj)) {
    checkDefined(obj);
    return present(dictMethod(obj, name), obj, name);
  }
  return pyGetattr(obj, name);
}

function sequenceIndex(length: number, key: unknown): number | undefined {
  if (typeof key === "boolean" || (typeof key === "number" && Number.isInteger(key))) {
    const i = numValue(key);
    const j = i < 0 ? i + length : i;
    return j >= 0 && j < length ? j : undefined;
  }
  return undefined;
}

/** `obj[key]`. */
export function pyGetitem(obj: unknown, key: unknown): unknown {
  checkDefined(obj);
  checkDefined(key);
  if (isStr(obj)) {
    const s = obj.toString();
    const cps = hasSurrogates(s) ? codePoints(s) : s;
    const i = sequenceIndex(cps.length, key);
    if (i !== undefined) return cps[i];
  } else if (Array.isArray(obj) && !viewKind(obj)) {
    const i = sequenceIndex(obj.length, key);
    if (i !== undefined) return obj[i];
  } else if (isDict(obj)) {
    if (isStr(key) || isNumeric(key)) {
      const k = isStr(key) ? key.toString() : String(numValue(key));
      if (Object.hasOwn(obj, k) && obj[k] !== undefined) return obj[k];
    }
  }
  if (typeof key === "string" && obj !== null && obj !== undefined) return pyGetattr(obj, key);
  return missing(obj, key);
}
