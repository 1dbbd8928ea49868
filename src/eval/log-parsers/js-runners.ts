import { pyStrip } from "../../python/string.js";
import type { StatusMap } from "../harness-constants.js";
import { LogParserError } from "./parser-error.js";
import { type ParserSpec, requireSpec } from "./parser-spec.js";
import { D, DOT, S } from "./python-text.js";

/**
 * The harness's parsers of JavaScript test runners' own reporters: jest `--verbose`, jest `--json` through
 * the harness's jq transform, vitest `--reporter=verbose`, karma's mocha reporter, and TAP.
 */

/** `✓ name (5 ms)`: jest's verbose line of one test (✓ passed, ✕ failed, ○ skipped or todo). */
const JEST_LINE = new RegExp(`^${S}*(✓|✕|○)${S}(${DOT}+?)(?:${S}\\((${D}+${S}*m?s)\\))?$`, "u");
const JEST_STATUS: Record<string, string> = { "✓": "PASSED", "✕": "FAILED", "○": "SKIPPED" };

/** The harness's `jest` parser (jest run with `--verbose`). Names are the test titles, without their suites. */
export function parseJest(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    if (!line.includes("✓") && !line.includes("✕") && !line.includes("○")) continue;
    const match = JEST_LINE.exec(pyStrip(line));
    if (match) map.set(pyStrip(match[2] ?? ""), JEST_STATUS[match[1] ?? ""] ?? "");
  }
  return map;
}

const JEST_JSON_LINE = new RegExp(`^\\[(PASSED|FAILED)\\]${S}(${DOT}+)$`, "u");

/** The harness's `jest_json` parser: `[PASSED] suite test` lines (jest `--json` through the harness's jq). */
export function parseJestJson(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    if (!line.includes("ED]")) continue;
    const match = JEST_JSON_LINE.exec(pyStrip(line));
    if (match) map.set(match[2] ?? "", match[1] ?? "");
  }
  return map;
}

/** `✓ file > suite > test 3ms`: vitest's verbose line (✓ passed, × failed, ↓ skipped). */
const VITEST_LINE = new RegExp(`^${S}*(✓|×|↓)${S}(${DOT}+?)(?:${S}(${D}+${S}*m?s?|\\[skipped\\]))?$`, "u");
const VITEST_STATUS: Record<string, string> = { "✓": "PASSED", "×": "FAILED", "↓": "SKIPPED" };

/** The harness's `vitest` parser (vitest run with `--reporter=verbose`). */
export function parseVitest(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    if (!line.includes("✓") && !line.includes("×") && !line.includes("↓")) continue;
    const match = VITEST_LINE.exec(pyStrip(line));
    if (match) map.set(match[2] ?? "", VITEST_STATUS[match[1] ?? ""] ?? "");
  }
  return map;
}

const KARMA_LINE = new RegExp(`^(${S}*)?([✔✖])?${S}(${DOT}*)$`, "u");

/**
 * The harness's `karma` parser: after `Starting browser`, indented suite lines and `✔`/`✖` test lines up to
 * `SUMMARY:`; a test's name is its suites and title joined with ` > `. A deeper line opens a suite, a
 * shallower one closes one (and is not a suite itself).
 */
export function parseKarma(log: string): StatusMap {
  const map: StatusMap = new Map();
  let indent = -1;
  const suites: string[] = [];
  let started = false;
  for (const line of log.split("\n")) {
    if (line.startsWith("SUMMARY:")) return map;
    if (line.includes("Starting browser")) {
      started = true;
      continue;
    }
    if (!started) continue;
    const match = KARMA_LINE.exec(line);
    if (!match) continue;
    const [, lead, status, name = ""] = match;
    if (lead && !status) {
      if (lead.length > indent) {
        indent = lead.length;
        suites.push(name);
      } else if (lead.length < indent) {
        indent = lead.length;
        suites.pop();
        continue;
      }
    }
    if (status === "✔" || status === "✖")
      map.set([...suites, name].join(" > "), status === "✔" ? "PASSED" : "FAILED");
  }
  return map;
}

const TAP_LINE = new RegExp(`^(ok|not ok) (${D}+) (${DOT}+)$`, "u");

/** The harness's `tap` parser: `ok 3 name` and `not ok 4 name` (the name keeps a leading `- `). */
export function parseTap(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    if (!line.includes("ok ")) continue;
    const match = TAP_LINE.exec(pyStrip(line));
    if (match) map.set(match[3] ?? "", match[1] === "ok" ? "PASSED" : "FAILED");
  }
  return map;
}

/** The harness's `immutable_js` parser: pull request 2006 ran jest `--verbose`, 2005 jest `--json`. */
export function parseImmutableJs(log: string, spec?: ParserSpec): StatusMap {
  const { instance_id } = requireSpec("parse_log_immutable_js", spec);
  const pr = instance_id.split("-").at(-1);
  if (pr === "2006") return parseJest(log);
  if (pr === "2005") return parseJestJson(log);
  throw new LogParserError(`log parser parse_log_immutable_js does not know instance ${instance_id}`);
}
