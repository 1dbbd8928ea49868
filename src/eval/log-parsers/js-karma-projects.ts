import { pyStrip } from "../../python/string.js";
import type { StatusMap } from "../harness-constants.js";
import { IndentSuites } from "./indent-suites.js";
import { type ParserSpec, requireSpec } from "./parser-spec.js";
import {
  ansiEscape,
  D,
  DOT,
  findAll,
  indentOf,
  LINE_END,
  LINE_START,
  NS,
  S,
  SPACE_NOT_BREAK,
  squash,
} from "./python-text.js";

/**
 * The harness's parsers of projects tested in a browser through karma (bpmn-js, Chart.js, OpenLayers,
 * Fusion Next): they read the `<browser> (<os>) <test> FAILED` lines, and Next also the ✓/✗ lines.
 */

const NUMBER = `[${D}.]+`;

/** Each pattern in turn; a pattern with two groups gives the second (the test after the browser's name). */
const BPMN_FAILURES = [
  new RegExp(`2KPhantomJS${S}${NUMBER}${S}\\(Linux${S}${NUMBER}\\)${S}(${DOT}*)FAILED\\n`, "gu"),
  new RegExp(`2KPhantomJS${S}${NUMBER}${S}\\(Linux${S}x86_64\\)${S}(${DOT}*)FAILED\\n`, "gu"),
  new RegExp(`Chrome${S}Headless${S}(${DOT}*)${S}\\(Linux${S}x86_64\\)${S}(${DOT}*)FAILED\\n`, "gu"),
  new RegExp(`HeadlessChrome${S}${NUMBER}${S}\\(Linux${S}${NUMBER}\\)${S}(${DOT}*)FAILED\\n`, "gu"),
];

/** The harness's `bpmn_js` parser: failures only. */
export function parseBpmnJs(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const pattern of BPMN_FAILURES)
    for (const match of log.matchAll(pattern)) map.set(match[match.length - 1] ?? "", "FAILED");
  return map;
}

const CHART_FAILURE = new RegExp(
  `Chrome${S}${NUMBER}${SPACE_NOT_BREAK}\\(${DOT}+?\\)${SPACE_NOT_BREAK}(${DOT}*)FAILED${LINE_END}`,
  "gu",
);

/** The harness's `chart_js` parser: colours removed, then `Chrome <version> (<os>) <test> FAILED` lines. */
export function parseChartJs(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const name of findAll(CHART_FAILURE, ansiEscape(log))) map.set(name, "FAILED");
  return map;
}

const OPENLAYERS_FAILURES = [
  new RegExp(`Chrome${S}Headless${S}${NUMBER}${S}\\(Linux${S}${NS}+\\)${S}(${DOT}*)${S}FAILED\\n`, "gu"),
  new RegExp(`Chrome${S}${NUMBER}${S}\\(Linux${S}${NS}+\\)${S}(${DOT}*)FAILED\\n`, "gu"),
  new RegExp(`${LINE_START}${S}{2}${D}+\\)([\\s\\S]*?)Error:`, "gu"),
  new RegExp(`${LINE_START}case${S}(${DOT}*):${S}mismatch`, "gu"),
];

/**
 * The harness's `openlayers` parser: failures only, from karma's browser lines, mocha's numbered failure
 * blocks (up to `Error:`) and the rendering suite's `case <name>: mismatch`; whitespace runs made one space.
 */
export function parseOpenlayers(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const pattern of OPENLAYERS_FAILURES)
    for (const name of findAll(pattern, log)) map.set(squash(name), "FAILED");
  return map;
}

const ASSERTION_DETAIL = new RegExp(`AssertionError:${S}+#([\\s\\S]*?)\\n\\n`, "gu");
const NEXT_FAIL = new RegExp(`^${DOT}*?✗${S}*(${DOT}*)`, "u");
const NEXT_PASS = new RegExp(`^${DOT}*?✓${S}*(${DOT}*)`, "u");
const SKIPPED_PREFIXES = ["ERROR", "LOG", "WARN", "Check", "in"];

/** Fusion Next before 1.27: karma's ✓/✗ lines after `Starting browser Chrome` of each ` xvfb-run ` command. */
function parseNextKarma(log: string): StatusMap {
  const map: StatusMap = new Map();
  const suites = new IndentSuites();
  const cleaned = ansiEscape(log).replace(ASSERTION_DETAIL, "");
  for (const command of cleaned.split(" xvfb-run ").slice(1)) {
    const output = command.split("Starting browser Chrome").at(-1) ?? "";
    for (const line of output.split("\n")) {
      if (line.startsWith("TOTAL")) break;
      const stripped = pyStrip(line);
      if (SKIPPED_PREFIXES.some((prefix) => stripped.startsWith(prefix))) continue;
      const failed = NEXT_FAIL.exec(line);
      const passed = failed ? undefined : NEXT_PASS.exec(line);
      const match = failed ?? passed;
      if (match) map.set([...suites.names(), match[1] ?? ""].join(" - "), failed ? "FAILED" : "PASSED");
      else if (indentOf(line) > 0) suites.enter(line);
    }
  }
  return map;
}

const NEXT_SUITE = new RegExp(`Running:(${DOT}*)\\)\\n{3}${S}{2}(${DOT}*)\\n`, "gu");
const NEXT_V2_FAIL = new RegExp(`${LINE_START}${S}{4}${D}+\\)${S}(${DOT}*)`, "gu");
const NEXT_V2_PASS = new RegExp(`${LINE_START}${S}{4}✓${S}(${DOT}*)\\(`, "gu");

/** Fusion Next 1.27: each `Running: <spec>)` section, tests named `<suite>: <title>`. */
function parseNextSections(log: string): StatusMap {
  const map: StatusMap = new Map();
  const matches = [...log.matchAll(NEXT_SUITE)];
  matches.forEach((match, index) => {
    const suite = match[2] ?? "";
    const section = log.slice((match.index ?? 0) + match[0].length, matches[index + 1]?.index ?? log.length);
    for (const name of findAll(NEXT_V2_FAIL, section)) map.set(`${suite}: ${pyStrip(name)}`, "FAILED");
    for (const name of findAll(NEXT_V2_PASS, section)) map.set(`${suite}: ${pyStrip(name)}`, "PASSED");
  });
  return map;
}

/** The harness's `next` parser: version 1.27 reads Cypress-style sections, every other version karma's output. */
export function parseNext(log: string, spec?: ParserSpec): StatusMap {
  const { version } = requireSpec("parse_log_next", spec);
  return version === "1.27" ? parseNextSections(log) : parseNextKarma(log);
}
