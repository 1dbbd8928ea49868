/** Plain-object check: YAML mappings and JSON objects, not arrays or null. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
