import { randomId } from "./random-id.js";

/** A local-time stamp for file names: 20261122-143005. */
export function timestampSlug(date = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}${pad(date.getMonth() + 1)}${pad(date.getDate())}-${pad(date.getHours())}${pad(date.getMinutes())}${pad(date.getSeconds())}`;
}

/** A short unique run id: time stamp plus 6 random letters and digits. */
export function newRunId(): string {
  return `${timestampSlug()}-${randomId(6)}`;
}
