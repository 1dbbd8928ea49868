import type { Action, ExecOutput } from "../messages.js";

export interface ExecuteOptions {
  cwd?: string;
  /** Seconds; overrides the environment's configured timeout for this action. */
  timeout?: number;
  /** Aborting kills the running command; the output then has returncode -1. */
  signal?: AbortSignal;
}

/**
 * Where actions run: the local machine, a Docker container, ...
 * `execute` never throws for a failing, timed-out or unrunnable command: that is data in the output.
 * It throws only when the environment itself is broken (container gone, daemon unreachable).
 */
export interface Environment {
  execute(action: Action, options?: ExecuteOptions): Promise<ExecOutput>;
  /** Variables this environment adds to every template (its config, platform fields, ...). */
  templateVars(): Record<string, unknown>;
  /** The `info.config.environment` and `info.config.environment_type` of a trajectory; never holds secrets. */
  serialize(): { environment: Record<string, unknown>; environment_type: string };
  /** Releases what the environment holds (a container, a temp dir). Safe to call twice. */
  close(): Promise<void>;
}

/** Where a run's containers are labelled from; lets `swerun cleanup` find what a crashed run left. */
export interface EnvironmentContext {
  runId: string;
  instanceId?: string;
  /** Progress lines (image pulls) for the console. */
  onProgress?: (line: string) => void;
  /** Kubernetes: where the run's pod is on its way to running (a batch's display counts them). */
  onPodPhase?: (phase: "pending" | "pulling" | "running", reason: string) => void;
}
