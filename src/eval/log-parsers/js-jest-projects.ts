import { pyStrip } from "../../python/string.js";
import type { StatusMap } from "../harness-constants.js";
import { IndentSuites } from "./indent-suites.js";
import { LogParserError } from "./parser-error.js";
import { D, DOT, findAll, indentOf, LINE_START, S } from "./python-text.js";

/** The harness's parsers of projects that run jest with their own settings: Calypso, Carbon, react-pdf, Grommet. */

const PASS_TIMED = new RegExp(`^${S}+✓${S}(${DOT}*)\\(${D}+ms\\)$`, "u");
const PASS_PLAIN = new RegExp(`^${S}+✓${S}(${DOT}*)`, "u");
const FAIL_TIMED = new RegExp(`^${S}+✕${S}(${DOT}*)\\(${D}+ms\\)$`, "u");
const FAIL_PLAIN = new RegExp(`^${S}+✕${S}(${DOT}*)`, "u");
const TIMING = new RegExp(`\\(${D}+ms\\)`, "u");

/**
 * The harness's `calypso` parser: the verbose output after each ` ./node_modules/.bin/jest ` command, up to
 * `Test Suites` or the first failure detail (`  ● `); a test is `<suites> - <title>` (suites from
 * indentation). A ✓/✕ line the harness's patterns do not fit makes its parser raise; so does this one.
 */
export function parseCalypso(log: string): StatusMap {
  const map: StatusMap = new Map();
  const suites = new IndentSuites();
  for (const run of log.split(" ./node_modules/.bin/jest ").slice(1)) {
    for (const line of run.split("\n")) {
      if (line.startsWith("Test Suites") || line.startsWith("  ● ")) break;
      const stripped = pyStrip(line);
      const passed = stripped.startsWith("✓");
      if (passed || stripped.startsWith("✕")) {
        const timed = TIMING.test(line);
        const pattern = passed ? (timed ? PASS_TIMED : PASS_PLAIN) : timed ? FAIL_TIMED : FAIL_PLAIN;
        const match = pattern.exec(line);
        if (!match)
          throw new LogParserError(
            `log parser parse_log_calypso cannot read the line ${JSON.stringify(line)}`,
          );
        map.set(pyStrip(`${suites.names().join(" - ")} - ${match[1] ?? ""}`), passed ? "PASSED" : "FAILED");
      } else if (indentOf(line) > 0) suites.enter(line);
    }
  }
  return map;
}

const NUMBER = `[${D}.]+`;
/** `PASS src/x.test.js (5.1 s)`: a file's result line, tried with each timing form, then without one. */
const FILE_RESULTS: Array<[RegExp, string]> = ["PASS", "FAIL"].flatMap((word) =>
  [`${S}\\(${NUMBER}ms\\)`, `${S}\\(${NUMBER}${S}s\\)`, `${S}\\(${NUMBER}s\\)`, ""].map(
    (timing): [RegExp, string] => [
      new RegExp(`^${word}${S}(${DOT}*)${timing}`, "u"),
      word === "PASS" ? "PASSED" : "FAILED",
    ],
  ),
);

/** The harness's `carbon` parser (also its `react_pdf`): jest's `PASS`/`FAIL <file>` lines, timing removed. */
export function parseCarbon(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    for (const [pattern, status] of FILE_RESULTS) {
      const match = pattern.exec(line);
      if (match) {
        map.set(match[1] ?? "", status);
        break;
      }
    }
  }
  return map;
}

const GROMMET_FAIL = new RegExp(`${LINE_START}FAIL${S}(${DOT}*)`, "gu");
const GROMMET_PASS = new RegExp(`${LINE_START}PASS${S}(${DOT}*)`, "gu");
const GROMMET_TIMING = new RegExp(`${S}\\(${NUMBER}${S}?(?:ms|s)\\)$`, "u");

/** The harness's `grommet` parser: every `FAIL <file>` line, then every `PASS <file>` line, timing removed. */
export function parseGrommet(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const name of findAll(GROMMET_FAIL, log)) map.set(pyStrip(name).replace(GROMMET_TIMING, ""), "FAILED");
  for (const name of findAll(GROMMET_PASS, log)) map.set(pyStrip(name).replace(GROMMET_TIMING, ""), "PASSED");
  return map;
}
