import { isPySpaceCode, pyRstrip, pyStrip } from "../../python/string.js";
import type { StatusMap } from "../harness-constants.js";
import { IndentSuites } from "./indent-suites.js";
import { parseCarbon } from "./js-jest-projects.js";
import { LogParserError } from "./parser-error.js";
import { type ParserSpec, requireSpec } from "./parser-spec.js";
import {
  afterFirst,
  ansiEscape,
  beforeLast,
  D,
  DOT,
  findAll,
  indentOf,
  LINE_START,
  pyFloat,
  S,
  squash,
} from "./python-text.js";
import { withoutXmlBlocks } from "./xml-blocks.js";

/**
 * The harness's parsers of projects tested with mocha (or jasmine) and their own scripts: highlight.js,
 * Lighthouse, marked, ESLint, p5.js, Prism.
 */

/** `before.split(separator)[-1]`: the text after the last separator (all of it when there is none). */
const afterLast = (s: string, separator: string) => {
  const index = s.lastIndexOf(separator);
  return index === -1 ? s : s.slice(index + separator.length);
};

const HIGHLIGHT_SUMMARY = new RegExp(`\\n[ \\t]*${D}+ passing`, "u");
const MS = new RegExp(`\\(${D}+ms\\)`, "u");
const MS_ALL = new RegExp(`\\(${D}+ms\\)`, "gu");
const NUMBERED = new RegExp(`^${D}+\\)`, "u");
const withoutTiming = (name: string) => (MS.test(name) ? pyStrip(name.replace(MS_ALL, "")) : pyStrip(name));

/**
 * The harness's `highlightjs` parser: mocha's spec output up to the `N passing` summary; `✓`/`✔` passed,
 * `N)` failed, any other indented line names the suite; a test is `<suite>.<title>`.
 */
export function parseHighlightjs(log: string): StatusMap {
  const map: StatusMap = new Map();
  const summary = HIGHLIGHT_SUMMARY.exec(log);
  const body = summary ? log.slice(0, summary.index) : log;
  let suite: string[] = [];
  for (const line of body.split("\n")) {
    const stripped = pyStrip(line);
    if (stripped.startsWith("✓") || stripped.startsWith("✔")) {
      const check = stripped.startsWith("✓") ? "✓" : "✔";
      map.set([...suite, withoutTiming(afterFirst(line, check))].join("."), "PASSED");
    } else if (NUMBERED.test(stripped)) {
      map.set([...suite, withoutTiming(afterFirst(line, ")"))].join("."), "FAILED");
    } else if (line.startsWith("  ")) suite = [stripped];
  }
  return map;
}

const LIGHTHOUSE_RUN = new RegExp(`running${S}${D}+${S}test${S}files`, "u");
const DIGIT = new RegExp(`^${D}$`, "u");

const DIGIT_BEFORE = new RegExp(`${D}$`, "u");

/** Where the first `\d+\spassing` starts (found by its word: a regex starting with `\d+` is slow), or -1. */
function firstPassing(text: string): number {
  for (let at = text.indexOf("passing"); at !== -1; at = text.indexOf("passing", at + 1)) {
    if (at < 2 || !isPySpaceCode(text.charCodeAt(at - 1))) continue;
    let start = at - 1;
    for (let digit = DIGIT_BEFORE.exec(text.slice(Math.max(0, start - 2), start)); digit; ) {
      start -= digit[0].length;
      digit = DIGIT_BEFORE.exec(text.slice(Math.max(0, start - 2), start));
    }
    if (start < at - 1) return start;
  }
  return -1;
}

const LIGHTHOUSE_TESTS: Array<[RegExp, string]> = [
  [new RegExp(`^✔${S}(${DOT}*)${S}\\(${D}+m+s\\)`, "u"), "PASSED"],
  [new RegExp(`^✔${S}(${DOT}*)`, "u"), "PASSED"],
  [new RegExp(`^${D}+\\)${S}(${DOT}*)${S}\\(${D}+m+s\\)`, "u"), "FAILED"],
  [new RegExp(`^${D}+\\)${S}(${DOT}*)`, "u"), "FAILED"],
];

/** Lighthouse 9.5 to 10.2: mocha's spec output after each `running N test files`, tests `<suites> - <title>`. */
function parseLighthouseMocha(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const part of log.split(LIGHTHOUSE_RUN).slice(1)) {
    const passing = firstPassing(part);
    const run = pyStrip(passing === -1 ? part : part.slice(0, passing));
    const suites = new IndentSuites();
    for (const line of run.split("\n")) {
      const stripped = pyStrip(line);
      // Every test pattern starts with ✔ or a digit.
      const lead = stripped[0] ?? "";
      const found =
        lead === "✔" || DIGIT.test(lead)
          ? LIGHTHOUSE_TESTS.find(([pattern]) => pattern.test(stripped))
          : undefined;
      if (found) {
        const match = found[0].exec(stripped);
        map.set([...suites.names(), match?.[1] ?? ""].join(" - "), found[1]);
      } else if (indentOf(line) > 0) suites.enter(line);
    }
  }
  return map;
}

const FULL_TITLE = new RegExp(`"fullTitle":${S}"(${DOT}*)",\\n`, "gu");

/** Lighthouse before 3: mocha's JSON reporter after each `./node_modules/.bin/mocha --reporter json`. */
function parseLighthouseJson(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const run of log.split("./node_modules/.bin/mocha --reporter json").slice(1)) {
    for (const name of findAll(FULL_TITLE, beforeLast(afterLast(run, '"passes": ['), "]")))
      map.set(name, "PASSED");
    for (const name of findAll(FULL_TITLE, beforeLast(afterLast(run, '"failures": ['), "],")))
      map.set(name, "FAILED");
  }
  return map;
}

/**
 * The harness's `lighthouse` parser, by the row's version: 9.5, 10.0 and 10.2 mocha's spec output; any
 * other version from 3 jest's file lines (as `carbon`); below 3 mocha's JSON. A version that is not a
 * number raises, as in the harness.
 */
export function parseLighthouse(log: string, spec?: ParserSpec): StatusMap {
  const { version } = requireSpec("parse_log_lighthouse", spec);
  if (version === "9.5" || version === "10.0" || version === "10.2") return parseLighthouseMocha(log);
  const number = version === undefined ? undefined : pyFloat(version);
  if (number === undefined)
    throw new LogParserError(`log parser parse_log_lighthouse cannot read version ${String(version)}`);
  return number >= 3 ? parseCarbon(log) : parseLighthouseJson(log);
}

const MARKED_FAILURE = new RegExp(`^${D}+\\)${S}(${DOT}*)`, "u");

/** The harness's `marked` parser: jasmine's numbered failures (`1) name`); passes are not listed. */
export function parseMarked(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const line of log.split("\n")) {
    const match = MARKED_FAILURE.exec(line);
    if (match) map.set(pyStrip(match[1] ?? ""), "FAILED");
  }
  return map;
}

const ESLINT_HEAD = new RegExp(`${S}{2}${D}+\\)`, "gu");

/**
 * The harness's `eslint` parser: mocha's numbered failures (`  1)`), each the text up to the first
 * whitespace after which the line holds an `Error`, as one line. The harness's pattern
 * `(\s{2}\d+\))([\s\S]*?)\s+(?:(.*)Error)` is read here without backtracking: the lazy text ends at the
 * first whitespace run whose end starts a line part that contains `Error`; the match ends after that line's
 * last `Error`, where the search for the next failure resumes.
 */
export function parseEslint(log: string): StatusMap {
  const map: StatusMap = new Map();
  let errorAt = -2; // the first "Error" at or after errorFrom (-1: none)
  let errorFrom = -1;
  const nextError = (from: number) => {
    if (errorAt === -1 && from >= errorFrom) return -1;
    if (from <= errorAt && from >= errorFrom) return errorAt;
    errorFrom = from;
    errorAt = log.indexOf("Error", from);
    return errorAt;
  };
  ESLINT_HEAD.lastIndex = 0;
  for (let head = ESLINT_HEAD.exec(log); head; head = ESLINT_HEAD.exec(log)) {
    const start = head.index + head[0].length;
    let end = -1;
    let k = start;
    while (k < log.length) {
      if (!isPySpaceCode(log.charCodeAt(k))) {
        k++;
        continue;
      }
      let runEnd = k;
      while (runEnd < log.length && isPySpaceCode(log.charCodeAt(runEnd))) runEnd++;
      const error = nextError(runEnd);
      if (error === -1) break;
      const lineEnd = log.indexOf("\n", runEnd);
      const limit = lineEnd === -1 ? log.length : lineEnd;
      if (error + 5 <= limit) {
        end = log.lastIndexOf("Error", limit - 5) + 5;
        break;
      }
      k = runEnd;
    }
    if (end === -1) {
      // No failure text after this head: the harness's search goes on from the next character.
      ESLINT_HEAD.lastIndex = head.index + 1;
      if (nextError(start) === -1) break;
      continue;
    }
    map.set(squash(log.slice(start, k)), "FAILED");
    ESLINT_HEAD.lastIndex = end;
  }
  return map;
}

/** p5.js: lines that are, or are inside, a JSON object or list printed by a test are dropped. */
function withoutJsonBlocks(log: string): string {
  const kept: string[] = [];
  let inObject = false;
  let inList = false;
  for (const line of log.split("\n")) {
    const trimmed = pyRstrip(line);
    if (trimmed.endsWith("{")) {
      inObject = true;
      continue;
    }
    if (trimmed.endsWith("[")) {
      inList = true;
      continue;
    }
    if (trimmed === "}" && inObject) {
      inObject = false;
      continue;
    }
    if (trimmed === "]" && inList) {
      inList = false;
      continue;
    }
    if (inObject || inList) continue;
    if (trimmed.startsWith("{") && trimmed.endsWith("}")) continue;
    if (trimmed.startsWith("[") && trimmed.endsWith("]")) continue;
    kept.push(line);
  }
  return kept.join("\n");
}

const P5_FAILURE = new RegExp(`${LINE_START}${S}*(${D}+)\\)([\\s\\S]{0,1000}?):`, "gu");

/** A failure's title lines: each indented deeper than the one before (the first deeper than nothing). */
function isTitle(lines: string[]): boolean {
  let last = 0;
  for (const line of lines) {
    const indent = indentOf(line);
    if (indent <= last) return false;
    last = indent;
  }
  return true;
}

/**
 * The harness's `p5js` parser: colours, JSON and XML blocks removed, then mocha's numbered failures (`1)`
 * followed by up to 1000 characters of indented title lines and a colon), named by the lines joined with `:`.
 */
export function parseP5js(log: string): StatusMap {
  const map: StatusMap = new Map();
  const cleaned = withoutXmlBlocks(withoutJsonBlocks(ansiEscape(log)));
  for (const match of cleaned.matchAll(P5_FAILURE)) {
    const lines = (match[2] ?? "").split("\n");
    if (isTitle(lines)) map.set(lines.map((line) => pyStrip(line)).join(":"), "FAILED");
  }
  return map;
}

const PRISM_COMMAND = "./node_modules/.bin/mocha tests/run.js --reporter json";

interface MochaReport {
  passes: Array<{ fullTitle: unknown }>;
  failures: Array<{ fullTitle: unknown }>;
}

/**
 * The harness's `prismjs` parser: after each `./node_modules/.bin/mocha tests/run.js --reporter json`, the
 * JSON from the first `{` to the last `}`; failures then passes by `fullTitle`. JSON that does not parse, or
 * lacks the lists, raises (the harness's does too).
 */
export function parsePrismjs(log: string): StatusMap {
  const map: StatusMap = new Map();
  for (const run of log.split(PRISM_COMMAND).slice(1)) {
    let report: MochaReport;
    try {
      report = JSON.parse(`{${beforeLast(afterFirst(run, "{"), "}")}}`) as MochaReport;
    } catch (error) {
      throw new LogParserError(`log parser parse_log_prismjs cannot read mocha's JSON: ${String(error)}`);
    }
    if (!Array.isArray(report.failures) || !Array.isArray(report.passes))
      throw new LogParserError("log parser parse_log_prismjs: mocha's JSON has no failures or passes list");
    for (const test of report.failures) map.set(String(test.fullTitle), "FAILED");
    for (const test of report.passes) map.set(String(test.fullTitle), "PASSED");
  }
  return map;
}
