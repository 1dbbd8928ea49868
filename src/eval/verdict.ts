import { type EvalType, MARKERS, type StatusMap } from "./harness-constants.js";
import { classifyLogs, classifyWith } from "./infra-failure.js";
import type { ParserSpec } from "./log-parsers/parser-spec.js";
import { LINE_END, LINE_START, PY_DIGIT, PY_SPACE, PY_WORD } from "./log-parsers/python-text.js";
import { isLineLocal, type LogParser } from "./log-parsers/registry.js";
import { firstMatches, type TestLog } from "./test-log.js";

/** What grading needs of a dataset row. */
export interface GradingSpec {
  instance_id: string;
  FAIL_TO_PASS: string[];
  PASS_TO_PASS: string[];
  eval_type: EvalType;
  /** The dataset row's `version` (two of the harness's parsers read it). */
  version?: string | undefined;
}

/** Which listed tests passed and which failed, per list (the harness's `tests_status`). */
export type TestsStatus = Record<
  "FAIL_TO_PASS" | "PASS_TO_PASS" | "FAIL_TO_FAIL" | "PASS_TO_FAIL",
  { success: string[]; failure: string[] }
>;

/** One instance's entry of report.json, with the harness's keys in its order. */
export interface InstanceReport {
  patch_is_None: boolean;
  patch_exists: boolean;
  patch_successfully_applied: boolean;
  resolved: boolean;
  infra_failure: boolean;
  infra_failure_reason?: string;
  tests_status?: TestsStatus;
}

export { normaliseNewlines, readLogText } from "./test-log.js";

const D = PY_DIGIT;
const S = `[${PY_SPACE}]`;
/**
 * Signs that a test runner ran (used when no test result could be parsed): a summary with a non-zero
 * count from karma, mocha, jest, tap, jasmine, or openlayers' per-case `': ok` lines.
 */
const SUITE_RAN = new RegExp(
  [
    `Executed [1-9]${D}* of ${D}+`,
    `TOTAL: [1-9]${D}* (?:SUCCESS|FAILED)`,
    `[1-9]${D}* passing`,
    `Tests:${S}+[1-9]${D}*`,
    `Test Suites:${S}+(?:${D}+ ${PY_WORD}+, )*[1-9]${D}* total`,
    `${LINE_START}# tests [1-9]${D}*`,
    `[1-9]${D}* specs?, ${D}+ failures?`,
    `': ok${LINE_END}`,
  ].join("|"),
  "u",
);

const EXIT_CODE = new RegExp(`${MARKERS.exitCode}:${S}*(-?${D}+)`, "u");

/** The value of a decimal digit of any script (each Unicode digit block runs 0 to 9). */
function digitValue(char: string): number {
  let code = char.codePointAt(0) ?? 0;
  let value = 0;
  while (value < 9 && /\p{Nd}/u.test(String.fromCodePoint(code - 1))) {
    code -= 1;
    value += 1;
  }
  return value % 10;
}

/** The test command's exit status the eval script recorded, or undefined when the log has none. */
export function testExitCode(content: string): number | undefined {
  return exitCodeOf(EXIT_CODE.exec(content) ?? undefined);
}

function exitCodeOf(match: RegExpExecArray | undefined): number | undefined {
  if (!match) return undefined;
  const text = match[1] ?? "";
  const negative = text.startsWith("-");
  let value = 0;
  for (const char of negative ? text.slice(1) : text) value = value * 10 + digitValue(char);
  return negative ? -value : value;
}

/**
 * The status map of a test log and whether the log is a valid run (the harness's `get_logs_eval`). Invalid:
 * a failure marker (apply, reset, tests errored, timed out), a missing start or end marker, no result and
 * no sign the suite ran, or a non-zero test exit code while no test FAILED or ERRORed. A log read in pieces
 * (a file) is parsed piece by piece when its parser reads each line on its own, else read whole once.
 */
export function logsEval(
  content: string | TestLog,
  parser: LogParser,
  spec?: ParserSpec,
): { statusMap: StatusMap; valid: boolean } {
  if (typeof content !== "string")
    return isLineLocal(parser)
      ? logsEvalPieces(content, parser, spec)
      : logsEval(content.text(), parser, spec);
  const invalid = { statusMap: new Map<string, string>(), valid: false };
  if (BAD_MARKERS.some((marker) => content.includes(marker))) return invalid;
  if (!content.includes(MARKERS.start) || !content.includes(MARKERS.end)) return invalid;
  const afterStart = content.split(MARKERS.start)[1] ?? "";
  let statusMap = parser(afterStart.split(MARKERS.end)[0] ?? "", spec);
  if (statusMap.size === 0) statusMap = parser(content, spec);
  if (statusMap.size === 0 && !SUITE_RAN.test(content)) return invalid;
  if (failsOnlyByExitCode(statusMap, () => testExitCode(content))) return invalid;
  return { statusMap, valid: true };
}

const BAD_MARKERS = [MARKERS.applyFailed, MARKERS.resetFailed, MARKERS.testsErrored, MARKERS.testsTimedOut];

/** A non-zero test exit code while tests were found and none FAILED or ERRORed. */
function failsOnlyByExitCode(statusMap: StatusMap, exitCode: () => number | undefined): boolean {
  if (statusMap.size === 0) return false;
  for (const status of statusMap.values()) if (status === "FAILED" || status === "ERROR") return false;
  const code = exitCode();
  return code !== undefined && code !== 0;
}

/**
 * `logsEval` of a log read in pieces, for a parser that reads each line on its own: the same markers and
 * region (from the first start marker to the next start or end marker), each piece of it parsed as it comes
 * and the maps merged in order, which is the map of the whole region. Holds one piece at a time.
 */
function logsEvalPieces(
  log: TestLog,
  parser: LogParser,
  spec?: ParserSpec,
): { statusMap: StatusMap; valid: boolean } {
  const invalid = { statusMap: new Map<string, string>(), valid: false };
  const statusMap: StatusMap = new Map();
  const parse = (text: string) => {
    for (const [name, status] of parser(text, spec)) statusMap.set(name, status);
  };
  let region: "before" | "in" | "after" = "before";
  let ended = false;
  for (const chunk of log.chunks()) {
    if (BAD_MARKERS.some((marker) => chunk.includes(marker))) return invalid;
    if (!ended && chunk.includes(MARKERS.end)) ended = true;
    let from = 0;
    if (region === "before") {
      const start = chunk.indexOf(MARKERS.start);
      if (start === -1) continue;
      region = "in";
      from = start + MARKERS.start.length;
    }
    if (region === "in") {
      const ends = [chunk.indexOf(MARKERS.start, from), chunk.indexOf(MARKERS.end, from)].filter(
        (at) => at !== -1,
      );
      if (ends.length === 0) parse(chunk.slice(from));
      else {
        parse(chunk.slice(from, Math.min(...ends)));
        region = "after";
      }
    }
  }
  if (region === "before" || !ended) return invalid;
  if (statusMap.size === 0) for (const chunk of log.chunks()) parse(chunk);
  if (statusMap.size === 0 && !firstMatches(log, [SUITE_RAN])[0]) return invalid;
  if (failsOnlyByExitCode(statusMap, () => exitCodeOf(firstMatches(log, [EXIT_CODE])[0]))) return invalid;
  return { statusMap, valid: true };
}

const isPassing = (status: string) => status === "PASSED" || status === "XFAIL";

/**
 * The status-map key of a listed test: the name itself, or, for a name cut inside its parameters (more `[`
 * than `]`, as hundreds of SWE-bench Verified names are), the first key it starts when all such keys agree
 * on passing or not.
 */
function resolveCase(name: string, map: StatusMap): string | undefined {
  if (map.has(name)) return name;
  const count = (char: string) => name.split(char).length - 1;
  if (count("[") > count("]")) {
    const matches = [...map.keys()].filter((key) => key.startsWith(name));
    const outcomes = new Set(matches.map((key) => isPassing(map.get(key) ?? "")));
    if (matches.length > 0 && outcomes.size === 1) return matches[0];
  }
  return undefined;
}

function statusOf(name: string, map: StatusMap): string | undefined {
  const key = resolveCase(name, map);
  return key === undefined ? undefined : map.get(key);
}

/** FAIL_TO_PASS: passed (or xfailed). */
const passed = (name: string, map: StatusMap) => isPassing(statusOf(name, map) ?? "");
/** PASS_TO_PASS: passed, xfailed or skipped (a skip is not a regression). */
const maintained = (name: string, map: StatusMap) => {
  const status = statusOf(name, map);
  return status !== undefined && (isPassing(status) || status === "SKIPPED");
};
/** Failed: missing, FAILED, ERROR or SKIPPED. A test that is none of these lands in neither list. */
const failed = (name: string, map: StatusMap) => {
  const status = statusOf(name, map);
  return status === undefined || status === "FAILED" || status === "ERROR" || status === "SKIPPED";
};

/** Sorts listed tests into success and failure, as the harness's `get_eval_tests_report` does. */
export function testsReport(map: StatusMap, spec: GradingSpec): TestsStatus {
  const sort = (names: string[], succeeded: (name: string) => boolean) => {
    const result = { success: [] as string[], failure: [] as string[] };
    for (const name of names) {
      if (succeeded(name)) result.success.push(name);
      else if (spec.eval_type === "fail_only" || failed(name, map)) result.failure.push(name);
    }
    return result;
  };
  // fail_only: only a test reported exactly as FAILED fails; absent or anything else succeeds.
  const notFailed = (name: string) => map.get(name) !== "FAILED";
  const failOnly = spec.eval_type === "fail_only";
  return {
    FAIL_TO_PASS: sort(spec.FAIL_TO_PASS, failOnly ? notFailed : (name) => passed(name, map)),
    PASS_TO_PASS: sort(spec.PASS_TO_PASS, failOnly ? notFailed : (name) => maintained(name, map)),
    FAIL_TO_FAIL: { success: [], failure: [] },
    PASS_TO_FAIL: { success: [], failure: [] },
  };
}

/**
 * Resolved only when every FAIL_TO_PASS and every PASS_TO_PASS test succeeded: the share of successes is 1
 * in both lists (an empty list counts as 1; a test in neither list does not count).
 */
export function isResolved(status: TestsStatus): boolean {
  return status.FAIL_TO_PASS.failure.length === 0 && status.PASS_TO_PASS.failure.length === 0;
}

/**
 * An instance's report entry from its prediction and test log (the harness's `get_eval_report`). `testOutput`
 * is the test_output.txt text read as `readLogText` does, or the file read in pieces (`fileTestLog`).
 */
export function evalReport(
  spec: GradingSpec,
  patch: string | null,
  testOutput: string | TestLog,
  parser: LogParser,
): InstanceReport {
  const report: InstanceReport = {
    patch_is_None: false,
    patch_exists: false,
    patch_successfully_applied: false,
    resolved: false,
    infra_failure: false,
  };
  if (patch === null) {
    report.patch_is_None = true;
    return report;
  }
  report.patch_exists = true;
  const { statusMap, valid } = logsEval(testOutput, parser, spec);
  if (!valid) {
    const classification =
      typeof testOutput === "string"
        ? classifyLogs([testOutput])
        : classifyWith((patterns) => firstMatches(testOutput, patterns).map(Boolean));
    if (classification) {
      report.infra_failure = classification.tier === "environment";
      report.infra_failure_reason = classification.reason;
    }
    return report;
  }
  report.patch_successfully_applied = true;
  const tests = testsReport(statusMap, spec);
  report.resolved = isResolved(tests);
  report.tests_status = tests;
  return report;
}
