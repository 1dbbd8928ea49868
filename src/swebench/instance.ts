import { existsSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Agent } from "../agent/agent.js";
import type { SwerunConfig } from "../config/schema.js";
import type { EventBus } from "../events.js";
import type { RecordedTiming } from "../facts/run-facts.js";
import { type RunOptions, type RunResult, runPreparedTask } from "../run/run.js";
import { endTiming } from "../run/timing.js";
import { AGENT_TYPES } from "../trajectory.js";
import { journalPath } from "../trajectory-journal.js";
import type { Checkout } from "./checkout.js";
import type { Instance } from "./dataset.js";

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
  return join(outputDir, instanceId, `${instanceId}.traj.json`);
}

/** The exit status and cost recorded in an instance's trajectory, if it has a readable one. */
export function recordedRun(
  outputDir: string,
  instanceId: string,
): { exit_status: string; cost: number } | undefined {
  const path = trajectoryPath(outputDir, instanceId);
  if (!existsSync(path)) return undefined;
  try {
    const info = JSON.parse(readFileSync(path, "utf8")).info ?? {};
    const cost = Number(info.model_stats?.instance_cost ?? 0);
    return { exit_status: String(info.exit_status ?? ""), cost: Number.isFinite(cost) ? cost : 0 };
  } catch {
    return undefined;
  }
}

/** The exit status recorded in an instance's finished trajectory, if it has one. */
export function recordedStatus(outputDir: string, instanceId: string): string | undefined {
  return recordedRun(outputDir, instanceId)?.exit_status;
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
 * is written to a `.partial` file and renamed over the old one only when the run ends, so a resumed batch
 * never loses a finished result to an interrupted rerun. Failures before the agent starts still get a trajectory.
 */
export async function runInstance(instance: Instance, context: InstanceContext): Promise<InstanceResult> {
  const startedAt = context.startedAt ?? Date.now();
  const id = instance.instance_id;
  const config = structuredClone(context.config);
  const finalPath = trajectoryPath(context.outputDir, id);
  const partial = `${finalPath}.partial`;
  rmSync(partial, { force: true });
  rmSync(journalPath(partial), { force: true });
  config.agent.mode = "yolo";
  const scripted = instance.swerun_scripted_outputs;
  if (config.model.model_class === "deterministic" && Array.isArray(scripted))
    config.model.outputs = scripted;
  const options: RunOptions = {
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
    ...(context.onPodPhase ? { onPodPhase: context.onPodPhase } : {}),
  };
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
    // Something threw past the run (it records its own errors): keep what it wrote.
    if (result === undefined && existsSync(partial)) renameSync(partial, finalPath);
  }
  // The trajectory's last save is written once, with the timing (a lost attempt's is only closed, then removed).
  if (lost) await dropTrajectory(result, partial);
  const timing = await endTiming(
    startedAt,
    lost ? undefined : partial,
    lost ? undefined : result.completeTrajectory,
  );
  if (!lost && existsSync(partial)) renameSync(partial, finalPath);
  return {
    instance_id: id,
    exit_status: result.exit_status,
    submission: result.submission,
    cost: result.cost,
    api_calls: result.api_calls,
    ...(result.error === undefined ? {} : { error: result.error }),
    ...(lost ? { lost } : {}),
    timing,
  };
}

/** A lost attempt's trajectory: closed, then removed with its undo journal (the batch runs it again). */
async function dropTrajectory(result: RunResult, partial: string): Promise<void> {
  await result.completeTrajectory?.();
  rmSync(partial, { force: true });
  rmSync(journalPath(partial), { force: true });
}
