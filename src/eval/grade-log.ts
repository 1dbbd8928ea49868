import { UserError } from "../errors.js";
import type { EvalType } from "./harness-constants.js";
import type { ParserSpec } from "./log-parsers/parser-spec.js";
import { LOG_PARSERS, logParser, unsupportedParserMessage } from "./log-parsers/registry.js";
import { evalReport, type InstanceReport, normaliseNewlines } from "./verdict.js";

/**
 * Grading without containers, for programs that have a test log already: the harness's parsers by name,
 * and the harness's verdict on one log.
 */

/** The 57 parser names of the SWE-bench 5.0.2 harness (`parse_log_...`), every one usable here. */
export const LOG_PARSER_NAMES: readonly string[] = Object.freeze(Object.keys(LOG_PARSERS));

/**
 * The harness's status map of a test log: test name → `PASSED`, `FAILED`, `SKIPPED`, `ERROR` or `XFAIL` (a
 * status is whatever the harness's parser takes: the Python ones read it from the log, so a stray `ERROR:`
 * can appear, as it does there), in the order the log first names each test. `parser` is a harness name with or without `parse_log_`. The log
 * is read as given (the harness reads test_output.txt in text mode: pass it through `\r\n` → `\n` first to
 * get what it gets from a file). `instance` is needed by `jekyll`, `immutable_js` (its id), `next` and
 * `lighthouse` (its version). Throws a UserError on an unknown parser name, and a LogParserError where the
 * harness's parser raises.
 */
export function parseTestLog(parser: string, log: string, instance?: ParserSpec): Map<string, string> {
  const parse = logParser(parser);
  if (!parse) throw new UserError(unsupportedParserMessage(parser));
  return parse(log, instance);
}

/** A dataset row, as far as grading a log needs it (SWE-bench 5.x columns; lists as arrays or JSON text). */
export interface LogGradingInstance {
  instance_id: string;
  log_parser: string;
  FAIL_TO_PASS: string[] | string;
  PASS_TO_PASS: string[] | string;
  eval_type?: EvalType;
  version?: string;
}

function testList(instance: LogGradingInstance, key: "FAIL_TO_PASS" | "PASS_TO_PASS"): string[] {
  let value: unknown = instance[key];
  if (typeof value === "string") {
    try {
      value = JSON.parse(value);
    } catch {
      value = undefined;
    }
  }
  if (!Array.isArray(value) || !value.every((name) => typeof name === "string"))
    throw new UserError(`${instance.instance_id}: ${key} must be a list of test names`);
  return value;
}

/**
 * The harness's report entry (report.json's value for the instance) of one eval-script log: the whole
 * test_output.txt, markers included, graded against the instance's FAIL_TO_PASS and PASS_TO_PASS with its
 * `log_parser`, as the harness's `get_eval_report` does; no container is involved. A log without the
 * markers, or with a failure marker, is not a valid run (`patch_successfully_applied` false). `patch`:
 * null grades a missing patch (`patch_is_None`); by default the patch is taken to exist.
 */
export function gradeTestLog(
  instance: LogGradingInstance,
  log: string,
  options: { patch?: string | null } = {},
): InstanceReport {
  const parser = logParser(instance.log_parser);
  if (!parser)
    throw new UserError(`${instance.instance_id}: ${unsupportedParserMessage(instance.log_parser)}`);
  const evalType = instance.eval_type ?? "pass_and_fail";
  if (evalType !== "pass_and_fail" && evalType !== "fail_only")
    throw new UserError(`${instance.instance_id}: eval_type must be pass_and_fail or fail_only`);
  const spec = {
    instance_id: instance.instance_id,
    FAIL_TO_PASS: testList(instance, "FAIL_TO_PASS"),
    PASS_TO_PASS: testList(instance, "PASS_TO_PASS"),
    eval_type: evalType,
    ...(instance.version === undefined ? {} : { version: String(instance.version) }),
  };
  return evalReport(spec, options.patch === undefined ? "" : options.patch, normaliseNewlines(log), parser);
}
