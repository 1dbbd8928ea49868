import { existsSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import type { Prediction } from "../datasets/predictions.js";
import type { RunJsonVerdict } from "../formats/run-json.js";
import { FileWriteError } from "../util/file-error.js";
import { runPool } from "../util/worker-pool.js";
import type { EvalInstance } from "./eval-instance.js";
import { type GradeResult, gradeInstance, instanceLogDir } from "./grade-instance.js";
import type { EvalDisplay } from "./grading-display.js";
import { finishGrading, recordVerdict } from "./grading-driver.js";
import { LOG_FILES } from "./harness-constants.js";
import type { RunReport } from "./harness-report.js";
import { regradeInstance } from "./regrade.js";

export interface EvaluationOptions {
  /** The daemon the gradings run on; none when regrading (no container is started). */
  docker?: Docker;
  /** The dataset's instances after --instance-ids / --filter (the run report's total). */
  instances: EvalInstance[];
  predictions: Map<string, Prediction>;
  runId: string;
  outputDir: string;
  workers: number;
  timeoutSeconds: number;
  /** Grade again instances that have a report.json. */
  redo: boolean;
  /** Grade again from the logs alone: every instance with a test_output.txt, no container (`--regrade`). */
  regrade?: boolean;
  keep?: boolean;
  network?: string;
  /** A task repo folder holding binary patch assets (`tasks/<id>/test_assets/`). */
  taskRepo?: string;
  display: EvalDisplay;
  /** A run folder's run.json, to record the verdicts in. */
  runJson?: string;
  /** Called before an instance is graded (e.g. to build a bundled instance's image). */
  prepare?: (instance: EvalInstance) => Promise<void>;
  /** True once no new instance may start (first Ctrl-C). */
  stopping: () => boolean;
  /** Aborted when running instances must stop (second Ctrl-C, SIGTERM). */
  signal: AbortSignal;
}

export interface EvaluationSummary {
  results: GradeResult[];
  report: RunReport;
  reportPath: string;
  lines: string[];
  skipped: number;
}

/** The verdict of an instance graded in an earlier run (its report.json), for run.json. */
function previousVerdict(report: RunReport, id: string): RunJsonVerdict | undefined {
  if (report.resolved_ids.includes(id)) return { resolved: true, status: "resolved" };
  if (report.unresolved_ids.includes(id)) return { resolved: false, status: "unresolved" };
  if (report.empty_patch_ids.includes(id)) return { resolved: false, status: "empty_patch" };
  return undefined;
}

interface ToGrade {
  instance: EvalInstance;
  prediction: Prediction;
}

/**
 * Grades every instance that has a non-empty prediction and no report.json yet (all of them with `redo`)
 * on `workers` parallel workers, each in its own container, then writes the run report. Verdicts go to the
 * display as they come, and to run.json when grading a run folder.
 */
export async function runEvaluation(options: EvaluationOptions): Promise<EvaluationSummary> {
  const { predictions, outputDir, runId, display } = options;
  const { toGrade, skipped } = selectToGrade(options);
  display.start(toGrade.length, skipped);
  const results: GradeResult[] = [];
  try {
    await runPool(
      toGrade,
      options.workers,
      async (item, worker) => {
        display.begin(worker, item.instance.instance_id);
        const result = await gradeOrError(options, item, worker);
        results.push(result);
        recordVerdict(options.runJson, runId, result, item.instance);
        display.end(worker, result);
      },
      options.stopping,
    );
  } finally {
    display.stop();
  }
  const { report, path, lines } = await finishGrading({
    predictions,
    dataset: options.instances,
    runId,
    outputDir,
    ...(options.docker ? { docker: options.docker } : {}),
    ...(options.runJson ? { runJson: options.runJson } : {}),
    verdicts: (report) => {
      const verdicts: Record<string, RunJsonVerdict> = {};
      for (const instance of options.instances) {
        const verdict = previousVerdict(report, instance.instance_id);
        if (verdict) verdicts[instance.instance_id] = verdict;
      }
      return verdicts;
    },
  });
  return { results, report, reportPath: path, lines, skipped };
}

/**
 * The instances to grade: those with a non-empty prediction and no report.json (all of them with `redo`;
 * with `regrade`, those with a test_output.txt); the others are counted as skipped.
 */
function selectToGrade(options: EvaluationOptions): { toGrade: ToGrade[]; skipped: number } {
  const toGrade: ToGrade[] = [];
  let skipped = 0;
  for (const instance of options.instances) {
    const prediction = options.predictions.get(instance.instance_id);
    if (!prediction?.model_patch) continue;
    const logDir = instanceLogDir(options.outputDir, options.runId, prediction);
    // With `redo` an earlier report.json stays until the new grading replaces it (or ends as the
    // harness's errors end, which removes it); a grading that could not be done keeps it.
    const skip = options.regrade
      ? !existsSync(join(logDir, LOG_FILES.testOutput))
      : existsSync(join(logDir, LOG_FILES.report)) && !options.redo;
    if (skip) skipped += 1;
    else toGrade.push({ instance, prediction });
  }
  return { toGrade, skipped };
}

/** One instance's grading (or regrading from its logs); a grading that could not start is an error result. */
async function gradeOrError(
  options: EvaluationOptions,
  { instance, prediction }: ToGrade,
  worker: number,
): Promise<GradeResult> {
  const { outputDir, runId, display } = options;
  try {
    if (options.regrade) return regradeInstance(instance, prediction, outputDir, runId);
    if (!options.docker) throw new Error("grading needs a Docker daemon");
    await options.prepare?.(instance);
    return await gradeInstance({
      docker: options.docker,
      instance,
      prediction,
      runId,
      outputDir,
      timeoutSeconds: options.timeoutSeconds,
      signal: options.signal,
      onPhase: (phase) => display.phase(worker, phase),
      onProgress: (line) => display.message(line),
      ...(options.keep ? { keep: true } : {}),
      ...(options.network ? { network: options.network } : {}),
      ...(options.taskRepo ? { taskRepo: options.taskRepo } : {}),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // A log folder or file that could not be written: named, as a grading that hit it says it.
    const unwritable = error instanceof FileWriteError;
    return {
      instance_id: instance.instance_id,
      status: "error",
      resolved: false,
      error: unwritable ? `output_unwritable: ${message}` : message,
      infra_failure: unwritable ? "output_unwritable" : "grading_not_started",
      logDir: instanceLogDir(outputDir, runId, prediction),
      testSeconds: 0,
      totalSeconds: 0,
    };
  }
}
