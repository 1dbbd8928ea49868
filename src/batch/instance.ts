import { closeSync, existsSync, fsyncSync, openSync, renameSync, rmSync } from "node:fs";
import type { Agent } from "../agent/agent.js";
import type { SwerunConfig } from "../config/schema.js";
import type { Checkout } from "../datasets/checkout.js";
import type { Instance } from "../datasets/dataset.js";
import { OutputPathError } from "../errors.js";
import type { EventBus } from "../events.js";
import type { RecordedTiming } from "../facts/run-facts.js";
import { runPreparedTask } from "../run/run.js";
import type { RunOptions, RunResult } from "../run/run-options.js";
import { endTiming } from "../run/timing.js";
import { AGENT_TYPES, recordedExitStatus } from "../trajectory/format.js";
import { journalPath } from "../trajectory/journal.js";
import { readTrajectoryInfo } from "../trajectory/reader.js";
import { type FileWriteError, fileWriteError } from "../util/file-error.js";
import { pathInside } from "../util/safe-path.js";

/** How one instance ended. */
export interface InstanceResult {
  instance_id: string;
  exit_status: string;
  submission: string;
  cost: number;
  api_calls: number;
  /** The error that ended the run, if one did (it is recorded in the trajectory). */
  error?: unknown;
  /** The attempt was lost with its Docker host or its pod: no trajectory was kept, and the batch runs it again. */
  lost?: boolean;
  /**
   * Its trajectory could not be written (a full disk, a folder made read-only): the run stopped, nothing of
   * it was kept, and the instance's earlier trajectory (if any) is as it was. `path` names the file.
   */
  unsaved?: { path: string; error: FileWriteError };
  /**
   * When the instance started (before its environment) and ended (its environment torn down), Unix seconds,
   * and the wall time between: recorded in its trajectory's `info.swerun_timing`, read by every output.
   */
  timing?: RecordedTiming;
}

/** Exit statuses of runs that finished (a resumed batch skips them); anything else is run again. */
export const FINISHED_STATUSES = new Set([
  "Submitted",
  "LimitsExceeded",
  "TimeExceeded",
  "RepeatedFormatError",
]);

export function trajectoryPath(outputDir: string, instanceId: string): string {
  return pathInside(outputDir, instanceId, `${instanceId}.traj.json`);
}

/** The exit status and cost recorded in an instance's trajectory, if it has a readable one. */
export function recordedOutcome(
  outputDir: string,
  instanceId: string,
): { exit_status: string; cost: number } | undefined {
  const path = trajectoryPath(outputDir, instanceId);
  if (!existsSync(path)) return undefined;
  const info = readTrajectoryInfo(path);
  if (!info) return undefined;
  const stats = info.model_stats as { instance_cost?: unknown } | undefined;
  const cost = Number(stats?.instance_cost ?? 0);
  return { exit_status: recordedExitStatus(info), cost: Number.isFinite(cost) ? cost : 0 };
}

export interface InstanceContext {
  config: SwerunConfig;
  outputDir: string;
  runId: string;
  bus: EventBus;
  /** Sets the instance's image or local checkout; may return a checkout to remove afterwards. */
  prepare: (config: SwerunConfig, instance: Instance) => Promise<Checkout | undefined>;
  /** When the batch started the instance (ms since the epoch); default: when `runInstance` is called. */
  startedAt?: number;
  /** Lets the batch stop this instance's agent (second Ctrl-C, SIGTERM). */
  onAgent: (agent: Agent | undefined) => void;
  /**
   * Asked when the instance ended without finishing, with the error that ended it: true when the attempt
   * was lost with its Docker host or its pod (an infrastructure error, not the instance's result). Its
   * trajectory is then dropped, not kept.
   */
  lost?: (error: unknown) => Promise<boolean>;
  /** Kubernetes: where the instance's pod is on its way to running. */
  onPodPhase?: RunOptions["onPodPhase"];
}

/**
 * Runs one instance through the run pipeline, in its own environment with its own model. The trajectory
 * is written to a `.partial` file and renamed over the old one only when the run ended and its last save is
 * whole on disk (fsynced), so neither a resumed batch interrupted again nor a full disk or a folder made
 * read-only ever replaces a finished result with a cut one. A trajectory that cannot be written stops its
 * run at once (no fallback copy elsewhere): the result is `unsaved`, the partial file goes and the file
 * the instance had before stays as it was. Failures before the agent starts still get a trajectory.
 */
export async function runInstance(instance: Instance, context: InstanceContext): Promise<InstanceResult> {
  const startedAt = context.startedAt ?? Date.now();
  const id = instance.instance_id;
  const config = structuredClone(context.config);
  const finalPath = trajectoryPath(context.outputDir, id);
  const partial = `${finalPath}.partial`;
  removePartial(partial);
  const options = instanceRunOptions(instance, context, config, partial);
  let checkout: Checkout | undefined;
  let lost = false;
  let result: RunResult | undefined;
  try {
    result = await runPreparedTask(instance.problem_statement, options, async () => {
      checkout = await context.prepare(config, instance);
    });
    lost = !FINISHED_STATUSES.has(result.exit_status) && ((await context.lost?.(result.error)) ?? false);
  } finally {
    checkout?.remove();
    // Something threw past the run (it records its own errors): keep what it wrote, unless an earlier result is there.
    if (result === undefined && existsSync(partial) && !existsSync(finalPath)) renameSync(partial, finalPath);
  }
  // The trajectory's last save is written once, with the timing (a lost attempt's is only closed, then removed).
  if (lost) await dropTrajectory(result, partial);
  let completeError: unknown;
  const complete = result.completeTrajectory;
  const timing = await endTiming(
    startedAt,
    lost ? undefined : partial,
    lost || !complete
      ? undefined
      : (extra) =>
          complete(extra).catch((error: unknown) => {
            completeError = error;
          }),
  );
  const unsaved = lost ? undefined : keepTrajectory(result, partial, finalPath, completeError);
  return {
    instance_id: id,
    exit_status: unsaved ? unsaved.error.name : result.exit_status,
    submission: result.submission,
    cost: result.cost,
    api_calls: result.api_calls,
    ...(result.error === undefined ? {} : { error: result.error }),
    ...(lost ? { lost } : {}),
    ...(unsaved ? { unsaved } : {}),
    timing,
  };
}

/** How an instance runs: yolo, its scripted outputs (if any), into `partial`, with no fallback path for it. */
function instanceRunOptions(
  instance: Instance,
  context: InstanceContext,
  config: SwerunConfig,
  partial: string,
): RunOptions {
  const id = instance.instance_id;
  config.agent.mode = "yolo";
  const scripted = instance.swerun_scripted_outputs;
  if (config.model.model_class === "deterministic" && Array.isArray(scripted))
    config.model.outputs = scripted;
  return {
    config,
    output: partial,
    runId: context.runId,
    instanceId: id,
    vars: { instance_id: id },
    startupVars: { ...instance },
    extras: { instance_id: id },
    bus: context.bus,
    hooks: { onAgent: context.onAgent },
    defaultAgentClass: "default", // mini-swe-agent runs batches with its default agent
    agentType: AGENT_TYPES.batch,
    holdLastSave: true,
    trajectoryFallback: false,
    ...(context.onPodPhase ? { onPodPhase: context.onPodPhase } : {}),
  };
}

/**
 * Renames the run's partial trajectory over the instance's trajectory when every save of it was written;
 * otherwise removes it (and its journal), leaving the instance's trajectory as it was, and returns why.
 */
function keepTrajectory(
  result: RunResult,
  partial: string,
  finalPath: string,
  completeError: unknown,
): { path: string; error: FileWriteError } | undefined {
  const failure =
    result.trajectoryFailure?.error ??
    completeError ??
    (result.error instanceof OutputPathError || result.trajectory === undefined ? result.error : undefined);
  if (failure === undefined && existsSync(partial)) {
    try {
      // What it replaces was whole: the new one is stored (fsynced) before it takes its place.
      if (existsSync(finalPath)) syncFile(partial);
      renameSync(partial, finalPath);
      return undefined;
    } catch (error) {
      removePartial(partial);
      return { path: finalPath, error: fileWriteError(finalPath, error) };
    }
  }
  removePartial(partial);
  const path = result.trajectoryFailure?.path ?? partial;
  // The output check's refusal carries the system's error (EACCES, ENOSPC) as its cause.
  const cause = failure instanceof OutputPathError && failure.cause !== undefined ? failure.cause : failure;
  return { path, error: fileWriteError(path, cause ?? new Error("no trajectory was written")) };
}

function syncFile(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Removes a partial trajectory and its undo journal (what is not there, or cannot go, is left). */
function removePartial(partial: string): void {
  for (const path of [partial, journalPath(partial)]) {
    try {
      rmSync(path, { force: true });
    } catch {
      // a folder that refuses it: the run's own output check says so
    }
  }
}

/** A lost attempt's trajectory: closed, then removed with its undo journal (the batch runs it again). */
async function dropTrajectory(result: RunResult, partial: string): Promise<void> {
  await result.completeTrajectory?.();
  removePartial(partial);
}
