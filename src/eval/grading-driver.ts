import { join } from "node:path";
import type { Instance } from "../datasets/dataset.js";
import type { DockerEndpoint } from "../environments/docker/client.js";
import type { RunJsonVerdict } from "../formats/run-json.js";
import type { EvalInstance } from "./eval-instance.js";
import type { GradeResult } from "./grade-instance.js";
import { type RunReport, type RunReportOptions, writeRunReport } from "./harness-report.js";
import { recordEvalInRunJson, verdictOf } from "./verdict-record.js";

/**
 * The grading driver both `swerun eval` (evaluate.ts, a list of predictions) and `swebench --eval`
 * (batch-grader.ts, instances as a batch ends them) use around `gradeInstance`: a bundled instance's image
 * first, each verdict into run.json as it comes, and at the end the run report, its path and the verdicts
 * on disk into run.json, and the line that sums it up.
 */

/** What run.json keeps about an instance besides its verdict: its log parser and language. */
export function instanceFacts(instance: EvalInstance): { log_parser?: string; language?: string } {
  return {
    ...(instance.log_parser ? { log_parser: instance.log_parser } : {}),
    ...(instance.language ? { language: instance.language } : {}),
  };
}

/** Builds a bundled (fixture) instance's image when it is missing; other instances' images are pulled by the grading. */
export async function fixtureImageReady(
  instance: EvalInstance,
  row: Instance | undefined,
  datasetDir: string | undefined,
  endpoint?: DockerEndpoint,
): Promise<void> {
  if (!row?.fixture || !datasetDir) return;
  const { ensureFixtureImage } = await import("../fixture-images/fixture-image.js");
  await ensureFixtureImage(instance.image, row, datasetDir, endpoint);
}

/** Records a verdict, with the instance's facts, in a run folder's run.json (none: nothing to record). */
export function recordVerdict(
  runJson: string | undefined,
  runId: string,
  result: GradeResult,
  instance: EvalInstance | undefined,
): void {
  if (!runJson) return;
  const verdict = { ...verdictOf(result), ...(instance ? instanceFacts(instance) : {}) };
  recordEvalInRunJson(runJson, { run_id: runId, verdicts: { [result.instance_id]: verdict } });
}

/**
 * The end of a grading: writes the run report, then records its path (relative to the run folder) and
 * `verdicts(report)` in run.json when there is one.
 */
export async function finishGrading(
  options: RunReportOptions & {
    runJson?: string;
    verdicts: (report: RunReport) => Record<string, RunJsonVerdict>;
  },
): Promise<{ report: RunReport; path: string; lines: string[] }> {
  const { runJson, verdicts, ...reportOptions } = options;
  const written = await writeRunReport(reportOptions);
  if (runJson)
    recordEvalInRunJson(runJson, {
      run_id: options.runId,
      report: join("eval", written.path.slice(options.outputDir.length + 1)),
      verdicts: verdicts(written.report),
    });
  return written;
}

/** The line both commands end with: resolved of total, and how many were graded, empty and errors. */
export function resolvedSummary(report: RunReport): string {
  return `${report.resolved_instances}/${report.total_instances} (${report.completed_instances} graded, ${report.empty_patch_instances} empty, ${report.error_instances} errors)`;
}
