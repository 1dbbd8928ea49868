import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isPlainObject } from "../config/merge.js";
import { type EvalReport, evalReports } from "../facts/inputs.js";
import { runJsonAt, runJsonPath } from "../formats/run-json.js";
import type { VerdictView } from "./model.js";

/** At most this many test-log lines are kept as evidence. */
const LOG_LINES = 60;
const PROBLEM_LINE = /\b(FAILED|FAIL|ERROR|Error|Traceback|AssertionError|failed)\b/;

const names = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];

/** Lines of a test log that name a failing test, else lines that look like failures, else the log's end. */
function relevantLines(log: string, failing: string[]): string[] {
  const lines = log.split("\n");
  const named = failing.length > 0 ? lines.filter((line) => failing.some((test) => line.includes(test))) : [];
  const picked = named.length > 0 ? named : lines.filter((line) => PROBLEM_LINE.test(line));
  const chosen = picked.length > 0 ? picked : lines.filter((line) => line.trim() !== "").slice(-20);
  return chosen.slice(0, LOG_LINES).map((line) => (line.length > 400 ? `${line.slice(0, 400)}…` : line));
}

/** The language and parser each graded instance of a run folder had, from its run.json's `eval.instances`. */
function instanceFacts(runDir: string): Map<string, { language: string | null; log_parser: string | null }> {
  const facts = new Map<string, { language: string | null; log_parser: string | null }>();
  // no run.json, or one that cannot be read: no language or parser shown
  const record = runJsonAt(runJsonPath(runDir));
  const instances = record && isPlainObject(record.eval) ? record.eval.instances : undefined;
  if (isPlainObject(instances))
    for (const [id, entry] of Object.entries(instances)) {
      if (!isPlainObject(entry)) continue;
      const text = (value: unknown) => (typeof value === "string" ? value : null);
      facts.set(id, { language: text(entry.language), log_parser: text(entry.log_parser) });
    }
  return facts;
}

function verdictOf(
  { dir, record }: EvalReport,
  facts: { language: string | null; log_parser: string | null } = { language: null, log_parser: null },
): VerdictView {
  const status = isPlainObject(record.tests_status) ? record.tests_status : {};
  const tests: VerdictView["tests"] = {};
  for (const [kind, value] of Object.entries(status)) {
    if (!isPlainObject(value)) continue;
    tests[kind] = { success: names(value.success), failure: names(value.failure) };
  }
  const logPath = join(dir, "test_output.txt");
  let logLines: string[] = [];
  let log: string | null = null;
  if (existsSync(logPath)) {
    try {
      const failing = Object.values(tests).flatMap((group) => group.failure);
      logLines = relevantLines(readFileSync(logPath, "utf8"), failing);
      log = logPath;
    } catch {
      // an unreadable log: the verdict without its lines
    }
  }
  return {
    resolved: record.resolved === true,
    report_path: join(dir, "report.json"),
    tests,
    log_lines: logLines,
    log_path: log,
    language: facts.language,
    log_parser: facts.log_parser,
  };
}

/**
 * Evaluation verdicts of a run folder with their evidence: the SWE-bench harness's reports under `eval/` (read
 * by `evalReports`: `{<id>: {resolved, tests_status: {FAIL_TO_PASS: {success, failure}, PASS_TO_PASS: ...}}}`)
 * and the relevant lines of the `test_output.txt` next to each, with the language and log parser run.json
 * recorded for the instance. When several reports name one instance, the
 * last in path order wins.
 */
export function readVerdicts(runDir: string): Map<string, VerdictView> {
  const facts = instanceFacts(runDir);
  return new Map(evalReports(runDir).map((report) => [report.id, verdictOf(report, facts.get(report.id))]));
}
