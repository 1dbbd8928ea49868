import { existsSync } from "node:fs";
import { join } from "node:path";
import type Docker from "dockerode";
import type { Prediction } from "../swebench/predictions.js";
import type { EvalInstance } from "./eval-instance.js";
import { type GradeResult, gradeInstance, instanceLogDir } from "./grade-instance.js";
import { LOG_FILES } from "./harness-constants.js";
import { runPool } from "../util/worker-pool.js";
import type { EvalDisplay } from "./progress.js";
import { regradeInstance } from "./regrade.js";
import { type RunJsonVerdict, recordEvalInRunJson, verdictOf } from "./run-json.js";
import { type RunReport, writeRunReport } from "./run-report.js";

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

/** What run.json keeps about an instance besides its verdict: its log parser and language. */
export function instanceFacts(instance: EvalInstance): { log_parser?: string; language?: string } {
  return {
    ...(instance.log_parser ? { log_parser: instance.log_parser } : {}),
    ...(instance.language ? { language: instance.language } : {}),
  };
}

/** The verdict of an instance graded in an earlier run (its report.json), for run.json. */
function previousVerdict(report: RunReport, id: string): RunJsonVerdict | undefined {
  if (report.resolved_ids.includes(id)) return { resolved: true, status: "resolved" };
  if (report.unresolved_ids.includes(id)) return { resolved: false, status: "unresolved" };
  if (report.empty_patch_ids.includes(id)) return { resolved: false, status: "empty_patch" };
  return undefined;
}

/**
 * Grades every instance that has a non-empty prediction and no report.json yet (all of them with `redo`)
 * on `workers` parallel workers, each in its own container, then writes the run report. Verdicts go to the
 * display as they come, and to run.json when grading a run folder.
 */
export async function runEvaluation(options: EvaluationOptions): Promise<EvaluationSummary> {
  const { predictions, outputDir, runId, display } = options;
  const toGrade: Array<{ instance: EvalInstance; prediction: Prediction }> = [];
  let skipped = 0;
  for (const instance of options.instances) {
    const prediction = predictions.get(instance.instance_id);
    if (!prediction?.model_patch) continue;
    const logDir = instanceLogDir(outputDir, runId, prediction);
    if (options.regrade) {
      if (existsSync(join(logDir, LOG_FILES.testOutput))) toGrade.push({ instance, prediction });
      else skipped += 1;
      continue;
    }
    const reportPath = join(logDir, LOG_FILES.report);
    // With `redo` an earlier report.json stays until the new grading replaces it (or ends as the
    // harness's errors end, which removes it); a grading that could not be done keeps it.
    if (existsSync(reportPath) && !options.redo) {
      skipped += 1;
      continue;
    }
    toGrade.push({ instance, prediction });
  }
  const record = (verdicts: Record<string, RunJsonVerdict>, report?: string) => {
    if (options.runJson)
      recordEvalInRunJson(options.runJson, { run_id: runId, verdicts, ...(report ? { report } : {}) });
  };
  display.start(toGrade.length, skipped);
  const results: GradeResult[] = [];
  try {
    await runPool(
      toGrade,
      options.workers,
      async ({ instance, prediction }, worker) => {
        display.begin(worker, instance.instance_id);
        let result: GradeResult;
        try {
          if (options.regrade) {
            result = regradeInstance(instance, prediction, outputDir, runId);
          } else {
            if (!options.docker) throw new Error("grading needs a Docker daemon");
            await options.prepare?.(instance);
            result = await gradeInstance({
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
          }
        } catch (error) {
          result = {
            instance_id: instance.instance_id,
            status: "error",
            resolved: false,
            error: error instanceof Error ? error.message : String(error),
            infra_failure: "grading_not_started",
            logDir: instanceLogDir(outputDir, runId, prediction),
            testSeconds: 0,
            totalSeconds: 0,
          };
        }
        results.push(result);
        record({ [result.instance_id]: { ...verdictOf(result), ...instanceFacts(instance) } });
        display.end(worker, result);
      },
      options.stopping,
    );
  } finally {
    display.stop();
  }
  const { report, path, lines } = await writeRunReport({
    predictions,
    dataset: options.instances,
    runId,
    outputDir,
    ...(options.docker ? { docker: options.docker } : {}),
  });
  const verdicts: Record<string, RunJsonVerdict> = {};
  for (const instance of options.instances) {
    const verdict = previousVerdict(report, instance.instance_id);
    if (verdict) verdicts[instance.instance_id] = verdict;
  }
  record(verdicts, options.runJson ? join("eval", path.slice(outputDir.length + 1)) : undefined);
  return { results, report, reportPath: path, lines, skipped };
}
