import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Prediction } from "../datasets/predictions.js";
import { type RunJsonEval, type RunJsonVerdict, runJsonAt } from "../formats/run-json.js";
import { removeStaleTemps } from "../util/atomic-write.js";
import { isPlainObject } from "../util/plain-object.js";
import { ID_MAX_BYTES, nameProblem } from "../util/safe-path.js";
import { instanceLogDir, modelLogDir } from "./grade-instance.js";
import { LOG_FILES } from "./harness-constants.js";

/**
 * What earlier gradings of a batch left in its folder, for a resumed `swebench --eval` (batch-grader.ts):
 * the verdicts of report.json files, those run.json records, and the temp files of interrupted writes.
 */

/** The verdicts of report.json files on disk, for the predictions that have one. */
export function verdictsOnDisk(
  predictions: Iterable<Prediction>,
  outputDir: string,
  runId: string,
): Record<string, RunJsonVerdict> {
  const verdicts: Record<string, RunJsonVerdict> = {};
  for (const prediction of predictions) {
    const path = join(instanceLogDir(outputDir, runId, prediction), LOG_FILES.report);
    if (!existsSync(path)) continue;
    try {
      const entry = JSON.parse(readFileSync(path, "utf8"))[prediction.instance_id] as { resolved?: unknown };
      if (entry && typeof entry.resolved === "boolean")
        verdicts[prediction.instance_id] = {
          resolved: entry.resolved,
          status: entry.resolved ? "resolved" : "unresolved",
        };
    } catch {
      // an unreadable report is graded again
    }
  }
  return verdicts;
}

/**
 * The eval run id a run folder's run.json records (`eval.run_id`), if any: its logs are under that id,
 * whatever the folder is called now (a renamed folder keeps its gradings).
 */
export function recordedEvalRunId(runJson: string): string | undefined {
  const record = runJsonAt(runJson);
  const runId = isPlainObject(record?.eval) ? record.eval.run_id : undefined;
  // A hand-edited id that cannot name a folder is not taken (the folder's name is used instead).
  return typeof runId === "string" && /^[\w.-]+$/.test(runId) && !nameProblem(runId, ID_MAX_BYTES)
    ? runId
    : undefined;
}

/** The verdicts run.json holds for the eval run `runId`. */
export function recordedVerdicts(runJson: string, runId: string): Record<string, RunJsonVerdict> {
  const recorded = runJsonAt(runJson)?.eval as RunJsonEval | undefined;
  return recorded?.run_id === runId ? recorded.instances : {};
}

/**
 * Removes the temp files of report.json and test_output.txt writes that a killed grading left in the
 * instances' log folders, and of the run id's run.json next to them.
 */
export function removeStaleReportTemps(outputDir: string, runId: string, modelName: string): void {
  const dir = modelLogDir(outputDir, runId, modelName);
  removeStaleTemps(dirname(dir));
  let ids: string[] = [];
  try {
    ids = readdirSync(dir);
  } catch {
    return;
  }
  for (const id of ids) removeStaleTemps(join(dir, id));
}
