import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Prediction } from "../swebench/predictions.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { redact } from "../util/secrets.js";
import type { EvalInstance } from "./eval-instance.js";
import { type GradeResult, instanceLogDir } from "./grade-instance.js";
import { LOG_FILES } from "./harness-constants.js";
import { evalReport, type InstanceReport } from "./instance-report.js";
import { logParser, unsupportedParserMessage } from "./log-parsers/registry.js";
import { pythonJson } from "./python-json-dumps.js";
import { fileTestLog } from "./test-log.js";

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
