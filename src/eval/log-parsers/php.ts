import type { StatusMap } from "../harness-constants.js";
import { DOT, S, W } from "./python-text.js";

/** `Calculator (Tests\Calculator)`: a testdox class heading. */
const SUITE_LINE = new RegExp(`^(${W}${DOT}+) \\(${DOT}+\\)$`, "u");
/** `✔ Adds two numbers`: a testdox test line (✔ passed, ✘ failed, ↩ skipped). */
const TEST_LINE = new RegExp(`^${S}*([✔✘↩])${S}*(${DOT}*)$`, "u");
const STATUS: Record<string, string> = { "✔": "PASSED", "✘": "FAILED", "↩": "SKIPPED" };

/**
 * The harness's `phpunit` parser (phpunit `--testdox`): `<class heading> > <test>`; a test before any
 * heading is under `None`, as the harness writes it.
 */
export function parsePhpunit(log: string): StatusMap {
  const map: StatusMap = new Map();
  let suite = "None";
  for (const line of log.split("\n")) {
    if (!line.includes("(") && !line.includes("✔") && !line.includes("✘") && !line.includes("↩")) continue;
    const heading = SUITE_LINE.exec(line);
    if (heading) {
      suite = heading[1] ?? "";
      continue;
    }
    const test = TEST_LINE.exec(line);
    if (test) map.set(`${suite} > ${test[2] ?? ""}`, STATUS[test[1] ?? ""] ?? "");
  }
  return map;
}
