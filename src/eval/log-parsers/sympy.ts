import { pySplit, pyStrip } from "../../python/string.js";
import type { StatusMap } from "../harness-constants.js";

/** `____ sympy/core/tests/test_x.py:test_y ____`: the header of a failure's traceback in `bin/test`. */
const FAILURE_HEADER = /(_*) ([^\n]*)\.py:([^\n]*) (_*)/g;

/**
 * The harness's `sympy` parser, for SymPy's `bin/test` runner: failure headers (`___ path.py:test ___`)
 * count as FAILED, then lines `test_name ok`, `test_name F`, `test_name E`.
 */
export function parseSympy(log: string): StatusMap {
  const map: StatusMap = new Map();
  // A header never spans lines, so only lines with `.py:` are searched (the same matches, in order).
  const lines = log.split("\n");
  for (const line of lines) {
    if (!line.includes(".py:")) continue;
    for (const match of line.matchAll(FAILURE_HEADER)) map.set(`${match[2]}.py:${match[3]}`, "FAILED");
  }
  for (const raw of lines) {
    const line = pyStrip(raw);
    if (!line.startsWith("test_")) continue;
    const name = pySplit(line)[0] ?? "";
    if (line.endsWith(" E")) map.set(name, "ERROR");
    if (line.endsWith(" F")) map.set(name, "FAILED");
    if (line.endsWith(" ok")) map.set(name, "PASSED");
  }
  return map;
}
