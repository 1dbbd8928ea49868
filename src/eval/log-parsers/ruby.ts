import { pyStrip } from "../../python/string.js";
import type { StatusMap } from "../harness-constants.js";
import { LogParserError } from "./parser-error.js";
import { type ParserSpec, requireSpec } from "./parser-spec.js";
import { DOT, S, W } from "./python-text.js";

/** The harness's parsers of Ruby test runners: minitest, cucumber, test-unit and RSpec (through jq). */

/** `TestX#test_y = 0.00 s = .`: minitest `-v` (`.` passed, `F`/`E` failed). */
const MINITEST_LINE = new RegExp(`^(${DOT}+)\\. ${DOT}*=${DOT}*(\\.|F|E)${DOT}*$`, "u");

/** The harness's `minitest` parser. */
export function parseMinitest(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    if (!line.includes("=")) continue;
    const match = MINITEST_LINE.exec(pyStrip(line));
    if (!match) continue;
    if (match[2] === ".") map.set(match[1] ?? "", "PASSED");
    else map.set(match[1] ?? "", "FAILED");
  }
  return map;
}

/** `Scenario name ....F`: cucumber's progress format (the first status after the dots counts). */
const CUCUMBER_LINE = new RegExp(`^(${DOT}*) \\.+(\\.|F)`, "u");

/** The harness's `cucumber` parser (cucumber `--format progress`). */
export function parseCucumber(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    if (!line.includes(" .")) continue;
    const match = CUCUMBER_LINE.exec(pyStrip(line));
    if (match) map.set(match[1] ?? "", match[2] === "." ? "PASSED" : "FAILED");
  }
  return map;
}

/** `test_name(TestCase): .`: test-unit's verbose line (`.` passed, `E`/`F` failed, `O` omitted). */
const RUBY_UNIT_LINE = new RegExp(`^${S}*(?:test: )?(${DOT}+):${S}+(\\.|E(?!${W})|F(?!${W})|O(?!${W}))`, "u");
const RUBY_UNIT_STATUS: Record<string, string> = { ".": "PASSED", E: "FAILED", F: "FAILED", O: "SKIPPED" };

/** The harness's `ruby_unit` parser (test-unit `-v`). */
export function parseRubyUnit(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    if (!line.includes(":")) continue;
    const match = RUBY_UNIT_LINE.exec(pyStrip(line));
    if (match) map.set(match[1] ?? "", RUBY_UNIT_STATUS[match[2] ?? ""] ?? "");
  }
  return map;
}

/** `full description - passed`: RSpec's JSON report turned into lines by the harness's jq filter. */
const RSPEC_LINE = new RegExp(`^(${DOT}+) - (passed|failed)`, "u");

/** The harness's `rspec_transformed_json` parser (pending examples are left out). */
export function parseRspecTransformedJson(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    if (!line.includes(" - ")) continue;
    const match = RSPEC_LINE.exec(pyStrip(line));
    if (match) map.set(match[1] ?? "", match[2] === "passed" ? "PASSED" : "FAILED");
  }
  return map;
}

/** The harness's `jekyll` parser: pull requests 9141, 8047, 8167 ran minitest; 8761, 8771 cucumber. */
export function parseJekyll(log: string, spec?: ParserSpec): StatusMap {
  const { instance_id } = requireSpec("parse_log_jekyll", spec);
  const pr = instance_id.split("-")[1];
  if (pr === "9141" || pr === "8047" || pr === "8167") return parseMinitest(log);
  if (pr === "8761" || pr === "8771") return parseCucumber(log);
  throw new LogParserError(`log parser parse_log_jekyll does not know instance ${instance_id}`);
}
