import { pyStrip } from "../../python/string.js";
import type { StatusMap } from "../harness-constants.js";
import { DOT } from "./python-text.js";

/** `--- PASS: TestName/sub (0.00s)`: `go test -v`'s result line of a test or subtest. */
const GO_RESULT = new RegExp(`^--- (PASS|FAIL|SKIP): (${DOT}+) \\((${DOT}+)\\)$`, "u");
const GO_STATUS: Record<string, string> = { PASS: "PASSED", FAIL: "FAILED", SKIP: "SKIPPED" };

/** The harness's `gotest` parser (`go test -v`): the `--- PASS/FAIL/SKIP: name (time)` lines. */
export function parseGotest(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    if (!line.includes("--- ")) continue;
    const match = GO_RESULT.exec(pyStrip(line));
    if (match) map.set(match[2] ?? "", GO_STATUS[match[1] ?? ""] ?? "");
  }
  return map;
}
