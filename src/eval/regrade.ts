import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Prediction } from "../datasets/predictions.js";
import { UserError } from "../errors.js";
import { pythonJson } from "../python/json-dumps-indent.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { redact } from "../util/secrets.js";
import type { EvalInstance } from "./eval-instance.js";
import { type GradeResult, instanceLogDir } from "./grade-instance.js";
import { LOG_FILES, RUN_EVALUATION_DIR } from "./harness-constants.js";
import { logParser, unsupportedParserMessage } from "./log-parsers/registry.js";
import { fileTestLog } from "./test-log.js";
import { evalReport, type InstanceReport } from "./verdict.js";

/**
 * Refuses a re-grade that would find no test log of any instance (a renamed folder, a wrong `--run-id`): it
 * would write a run report and run.json verdicts of nothing over the ones there. Exit 2, nothing changed;
 * the line names the run ids that have logs there.
 */
export function checkRegradeLogs(
  outputDir: string,
  runId: string,
  instances: EvalInstance[],
  predictions: Map<string, Prediction>,
): void {
  const logged = instances.some((instance) => {
    const prediction = predictions.get(instance.instance_id);
    if (!prediction?.model_patch) return false;
    return existsSync(join(instanceLogDir(outputDir, runId, prediction), LOG_FILES.testOutput));
  });
  if (logged) return;
  let runs: string[] = [];
  try {
    runs = readdirSync(join(outputDir, ...RUN_EVALUATION_DIR))
      .filter((name) => name !== runId)
      .sort();
  } catch {
    // no logs of any run
  }
  throw new UserError(
    `--regrade: no ${LOG_FILES.testOutput} of evaluation run ${runId} under ${join(outputDir, ...RUN_EVALUATION_DIR, runId)}: nothing to grade again, nothing changed` +
      (runs.length > 0 ? ` (logs there are of run ${runs.join(", ")}: pass --run-id)` : ""),
  );
}

/**
 * Grades an instance again from the test_output.txt of an earlier grading, as the harness's report step
 * (`rewrite_reports`) does: no container; report.json is written again from the log and the dataset row.
 * An instance without a test log (never graded, or its patch did not apply) is an error.
 */
export function regradeInstance(
  instance: EvalInstance,
  prediction: Prediction,
  outputDir: string,
  runId: string,
): GradeResult {
  const started = Date.now();
  const logDir = instanceLogDir(outputDir, runId, prediction);
  const testOutput = join(logDir, LOG_FILES.testOutput);
  const result = (extra: Partial<GradeResult>): GradeResult => ({
    instance_id: instance.instance_id,
    status: "error",
    resolved: false,
    logDir,
    testSeconds: 0,
    totalSeconds: (Date.now() - started) / 1000,
    ...extra,
  });
  if (!existsSync(testOutput)) return result({ error: `no ${LOG_FILES.testOutput} to grade again` });
  const parser = logParser(instance.log_parser);
  if (!parser) return result({ error: unsupportedParserMessage(instance.log_parser) });
  const entry: InstanceReport = evalReport(instance, prediction.model_patch, fileTestLog(testOutput), parser);
  writeFileAtomic(join(logDir, LOG_FILES.report), [redact(pythonJson({ [instance.instance_id]: entry }, 4))]);
  return result({
    status: entry.resolved ? "resolved" : "unresolved",
    resolved: entry.resolved,
    report: entry,
  });
}
