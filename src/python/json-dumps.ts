/**
 * Python's `json.dumps(value)` with its defaults: `", "` and `": "` between items, every character from DEL up
 * escaped as `\uXXXX` (ensure_ascii). How litellm writes tool-call arguments it builds from a JSON object.
 */
export function pythonJsonDumps(value: unknown): string {
  return ascii(dumps(value));
}

function dumps(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(dumps).join(", ")}]`;
  if (typeof value === "object" && value !== null) {
    const items = Object.entries(value).filter(([, item]) => item !== undefined);
    return `{${items.map(([key, item]) => `${JSON.stringify(key)}: ${dumps(item)}`).join(", ")}}`;
  }
  if (typeof value === "number" && !Number.isFinite(value))
    return Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity";
  return JSON.stringify(value) ?? "null";
}

function ascii(text: string): string {
  return text.replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
