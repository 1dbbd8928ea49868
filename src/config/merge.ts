import { isPlainObject } from "../util/plain-object.js";

export { isPlainObject };

/**
 * Merges `source` into `target` recursively (objects merge, everything else replaces) and records,
 * for every path written, which config spec it came from.
 */
export function mergeInto(
  target: Record<string, unknown>,
  source: Record<string, unknown>,
  origin: string,
  provenance: Map<string, string>,
  prefix = "",
): void {
  for (const [key, value] of Object.entries(source)) {
    const path = prefix ? `${prefix}.${key}` : key;
    provenance.set(path, origin);
    if (isPlainObject(value)) {
      if (!isPlainObject(target[key])) {
        forgetBelow(path, provenance);
        target[key] = {};
      }
      mergeInto(target[key] as Record<string, unknown>, value, origin, provenance, path);
    } else {
      forgetBelow(path, provenance);
      target[key] = value;
    }
  }
}

function forgetBelow(path: string, provenance: Map<string, string>): void {
  for (const known of [...provenance.keys()]) {
    if (known.startsWith(`${path}.`)) provenance.delete(known);
  }
}

/** The origin of the longest recorded prefix of `path`. */
export function originOf(path: string, provenance: Map<string, string>): string | undefined {
  let current = path;
  for (;;) {
    const origin = provenance.get(current);
    if (origin !== undefined) return origin;
    const dot = current.lastIndexOf(".");
    if (dot < 0) return undefined;
    current = current.slice(0, dot);
  }
}
