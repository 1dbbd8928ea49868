import { pySplit } from "../../python/string.js";
import type { StatusMap } from "../harness-constants.js";

/**
 * The harness's `seaborn` parser: `FAILED <name>` and `PASSED <name>` summary lines, and pytest's verbose
 * `<name> PASSED [ 10%]` progress lines.
 */
export function parseSeaborn(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    const words = pySplit(line);
    const [first, second] = words;
    if (first === undefined || second === undefined) continue;
    if (line.startsWith("FAILED")) map.set(second, "FAILED");
    else if (line.includes(" PASSED ")) {
      if (second === "PASSED") map.set(first, "PASSED");
    } else if (line.startsWith("PASSED")) map.set(second, "PASSED");
  }
  return map;
}
