import { existsSync } from "node:fs";
import { exitCodeOf } from "../errors.js";
import { modelLimitsOf } from "../facts/model-limits.js";
import { factsWithoutTrajectory, readRunFacts } from "../facts/read-run.js";
import type { RunFacts } from "../facts/run-facts.js";
import { writeOutput } from "../util/output-file.js";
import { redact } from "../util/secrets.js";
import { buildReport, reportText } from "./report-json.js";

/** What the run knows when its trajectory cannot tell (no trajectory yet, or no task recorded). */
export interface ReportContext {
  task: string;
  model?: string | null;
  /** The error that ended the run, if one did. */
  error?: unknown;
}

function noTrajectoryFacts(path: string, context: ReportContext): RunFacts {
  const error = context.error;
  return {
    ...factsWithoutTrajectory(path, {
      task: context.task,
      model: context.model ?? null,
      exit_status: error instanceof Error ? error.constructor.name : "Error",
      error: error instanceof Error ? error.message : String(error ?? "the run ended before it started"),
    }),
    exit_code: exitCodeOf(error),
  };
}

/**
 * Writes the report of a run that just ended (after its trajectory was flushed), atomically (`-`: standard
 * output) and with secrets redacted. Without a trajectory (the run failed before the agent started) the report says so.
 */
export async function writeReportFile(
  reportPath: string,
  trajectoryPath: string,
  context: ReportContext,
): Promise<void> {
  const facts = existsSync(trajectoryPath)
    ? readRunFacts(trajectoryPath)
    : noTrajectoryFacts(trajectoryPath, context);
  facts.task ??= context.task;
  const report = buildReport(facts, await modelLimitsOf(facts));
  writeOutput(reportPath, [redact(reportText(report))]);
}
