/**
 * swerun as a library (`import ... from "swerun"`, the package's only entry point): the names the README's
 * "Use it as a library" documents, for a library user's three jobs: run one task (with a model or environment
 * of one's own), run a SWE-bench batch, grade predictions (in containers, or from a test log without them).
 * Everything else is internal. Importing this module does no work (no config, no files, no listeners; the
 * batch's and the grading's code loads on their first call); test/index.test.ts keeps a snapshot of the list.
 */

import type { EvalRequest, EvalResult } from "./commands/eval.js";
import type { SwebenchRequest, SwebenchResult } from "./commands/swebench.js";

// Run one task: the agent loop, the config, the model and environment interfaces with their makers, the run
// (`runTask`, or `openRun` step by step), the events it reports, its trajectory.
export { Agent } from "./agent/agent.js";
// A batch and a grading in containers: what `runSwebench` and `evaluatePredictions` below take and give.
export type { EvalRequest, EvalResult } from "./commands/eval.js";
export type { SwebenchRequest, SwebenchResult } from "./commands/swebench.js";
export { ConfigError } from "./config/config-error.js";
export { type ConfigOverride, loadConfig } from "./config/load.js";
export type { SwerunConfig } from "./config/schema.js";
export type { Environment } from "./environments/environment.js";
export { createEnvironment } from "./environments/index.js";
export { LocalEnvironment } from "./environments/local.js";
export { FormatError, UserError } from "./errors.js";
// Grading a test log without containers: the SWE-bench harness's log parsers and its verdict.
export { gradeTestLog, LOG_PARSER_NAMES, type LogGradingInstance, parseTestLog } from "./eval/grade-log.js";
export type { RunReport } from "./eval/harness-report.js";
export { LogParserError } from "./eval/log-parsers/parser-error.js";
export type { InstanceReport } from "./eval/verdict.js";
export type { AgentEvent } from "./events.js";
export type { ExecOutput, Message } from "./messages.js";
export { DeterministicModel } from "./models/deterministic.js";
export { createModel } from "./models/index.js";
export type { Model } from "./models/model.js";
export { openRun, runTask } from "./run/run.js";
export type { RunHooks, RunOptions, RunResult } from "./run/run-options.js";
export type { RunSession } from "./run/run-session.js";
export { renderTemplate } from "./templates/render.js";
export { type LoadedTrajectory, loadTrajectory } from "./trajectory/reader.js";

/**
 * Runs a SWE-bench batch as `swerun swebench` does: progress on standard error, the first Ctrl-C lets running
 * instances finish, the second stops them. Resolves with the batch's summary and folder.
 */
export async function runSwebench(request: SwebenchRequest): Promise<SwebenchResult> {
  return (await import("./commands/swebench.js")).runSwebench(request);
}

/**
 * Grades predictions as `swerun eval` does: each instance in its image's container on DOCKER_HOST's daemon
 * (with `regrade`, from earlier logs without containers), progress on standard error. Resolves with the run report.
 */
export async function evaluatePredictions(request: EvalRequest): Promise<EvalResult> {
  return (await import("./commands/eval.js")).evaluatePredictions(request);
}
