/**
 * `json.dumps(value, indent=n)` as Python writes it (the harness's report files): the same layout as
 * `JSON.stringify` with an indent, and every character from DEL up escaped as `\uXXXX` (ensure_ascii).
 */
export function pythonJson(value: unknown, indent: number): string {
  return JSON.stringify(value, null, indent).replace(
    /[\u007f-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
