// A trajectory file: mini-swe-agent's format, its `info`, and their builders (writer.ts writes it).
import type { Message } from "../messages.js";
import { swerunVersion } from "../util/package-root.js";

export const TRAJECTORY_FORMAT = "mini-swe-agent-1.1";

/** `info` of a `.traj.json`, with exactly mini-swe-agent's keys (plus any extras the caller adds). */
export interface TrajectoryInfo {
  model_stats: { instance_cost: number; api_calls: number };
  config: {
    agent: Record<string, unknown>;
    agent_type: string;
    model: Record<string, unknown>;
    model_type: string;
    environment: Record<string, unknown>;
    environment_type: string;
  };
  mini_version: string;
  exit_status: string;
  submission: string;
  [key: string]: unknown;
}

/** A whole trajectory file. Top-level extras (e.g. `instance_id`) go after `trajectory_format`. */
export interface Trajectory {
  info: TrajectoryInfo;
  messages: Message[];
  trajectory_format: typeof TRAJECTORY_FORMAT;
  [key: string]: unknown;
}

/**
 * `info.config.agent_type`: mini-swe-agent's class path for the agent class the run followed (swerun has
 * one agent; `agent_class` decides which of mini-swe-agent's it behaves as). mini-swe-agent's swebench
 * batches run its ProgressTrackingAgent (a DefaultAgent), whatever `agent_class` says.
 */
export const AGENT_TYPES = {
  default: "minisweagent.agents.default.DefaultAgent",
  interactive: "minisweagent.agents.interactive.InteractiveAgent",
  batch: "minisweagent.run.benchmarks.utils.common.ProgressTrackingAgent",
} as const;

/**
 * The one builder of a trajectory's `info.config`: the agent's config and what the model and the environment
 * say about themselves (their `serialize()`; a run that failed before they existed passes what their configs
 * say, see `serializeModelConfig` and `serializeEnvironmentConfig`).
 */
export function trajectoryConfig(
  agent: Record<string, unknown>,
  model: { model: Record<string, unknown>; model_type: string },
  environment: { environment: Record<string, unknown>; environment_type: string },
  agentType: string = AGENT_TYPES[agent.agent_class === "default" ? "default" : "interactive"],
): TrajectoryInfo["config"] {
  return {
    agent: { ...agent },
    agent_type: agentType,
    model: model.model,
    model_type: model.model_type,
    environment: environment.environment,
    environment_type: environment.environment_type,
  };
}

/** The one builder of a trajectory's `info`: usage, config, version, and how the run ended (its exit message). */
export function trajectoryInfo(
  config: TrajectoryInfo["config"],
  usage: { cost: number; apiCalls: number },
  exit: Message | undefined,
  extra: Record<string, unknown> = {},
): TrajectoryInfo {
  const ended = exit?.role === "exit" ? exit.extra : undefined;
  return {
    model_stats: { instance_cost: usage.cost, api_calls: usage.apiCalls },
    config,
    mini_version: swerunVersion(),
    exit_status: ended?.exit_status ?? "",
    submission: ended?.submission ?? "",
    ...extra,
  };
}

/** A recorded `info`'s exit status, read from a file: "" when it records none. */
export function recordedExitStatus(info: Record<string, unknown>): string {
  return typeof info.exit_status === "string" ? info.exit_status : "";
}
