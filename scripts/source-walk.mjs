// What the source checks (check-functions.mjs, check-sizes.mjs) share: the files they read and line numbers.
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** The TypeScript and JavaScript files below `dir` (declaration files left out). */
export function sourceFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|js)$/.test(path) && !path.endsWith(".d.ts") ? [path] : [];
  });
}

/** 1-based line of each offset, from the offsets where lines start. */
export function lineOf(starts, offset) {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (starts[middle] <= offset) low = middle;
    else high = middle - 1;
  }
  return low + 1;
}
