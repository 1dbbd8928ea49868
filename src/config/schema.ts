import * as z from "zod/mini";
import { bubblewrapEnvironmentSchema } from "./bubblewrap.js";
import { count, environmentBase } from "./common.js";
import { dockerEnvironmentSchema } from "./docker.js";
import { kubernetesEnvironmentSchema } from "./kubernetes.js";
import { modelSchema } from "./model.js";

export { formatErrorTemplate, MODEL_CLASS_PATHS, MODEL_CLASSES, modelSchema } from "./model.js";

/** The `agent` section: prompts, limits and interaction mode. */
export const agentSchema = z.strictObject({
  /** Template of the first (system) message. */
  system_template: z.string(),
  /** Template of the second (user) message holding the task. */
  instance_template: z.string(),
  /** Maximum model calls; 0 means no limit. */
  step_limit: z._default(count, 0),
  /** Stop once the run's cost reaches this many dollars; 0 means no limit. */
  cost_limit: z._default(z.number().check(z.minimum(0)), 3),
  /** Stop before the next model call once this many seconds have passed; 0 means no limit. */
  wall_time_limit_seconds: z._default(z.number().check(z.minimum(0)), 0),
  /** End the run after this many format errors in a row; 0 means no limit. */
  max_consecutive_format_errors: z._default(count, 3),
  /** Where the trajectory is written. */
  output_path: z._default(z.nullable(z.string()), null),
  /** yolo runs every command; confirm asks before each; human lets the user type the commands. */
  mode: z._default(z.enum(["yolo", "confirm", "human"]), "confirm"),
  /** Regular expressions of commands that run without confirmation in confirm mode. */
  whitelist_actions: z._default(z.array(z.string()), []),
  /** Ask before accepting a submission in confirm mode. */
  confirm_exit: z._default(z.boolean(), true),
  /**
   * mini-swe-agent's agent classes (short names and class paths are mapped when the config loads); both
   * are swerun's one agent, `mode` decides the interaction. They differ where mini-swe-agent's do: when an
   * action submits, `default` records no observation of that step, `interactive` records the outputs
   * before it (and answers the remaining tool calls as not executed). Unset: the command's default
   * (`interactive` for run and swebench-single, `default` for swebench batches, as in mini-swe-agent).
   */
  agent_class: z.optional(z.enum(["default", "interactive"])),
});

export const localEnvironmentSchema = z.strictObject({
  environment_class: z.literal("local"),
  ...environmentBase,
  /**
   * swerun's own: the program and flags that run each command on this machine, e.g. ["bash", "-c"].
   * Unset: `/bin/sh -c`, as mini-swe-agent's local environment, which ignores `interpreter` (a Docker
   * key, dropped for local so that a config written for Docker runs the same way under both tools).
   */
  local_interpreter: z.optional(z.array(z.string()).check(z.minLength(1))),
});

export const environmentSchema = z.discriminatedUnion("environment_class", [
  localEnvironmentSchema,
  dockerEnvironmentSchema,
  bubblewrapEnvironmentSchema,
  kubernetesEnvironmentSchema,
]);

/** Environment classes whose commands work on this machine's files: their `cwd` is a host directory. */
export function onHostFiles(config: { environment_class: string }): boolean {
  return config.environment_class === "local" || config.environment_class === "bubblewrap";
}

/** The `run` section: what `swerun run` does around the agent. */
export const runSchema = z.strictObject({
  /** The task, when not given with -t. */
  task: z.optional(z.string()),
  /** A directory (relative to the config file) copied into a fresh temporary directory that becomes the local cwd. */
  setup_dir: z.optional(z.string()),
  /** A command run in the environment before the agent starts; a non-zero exit fails the run. */
  env_startup_command: z.optional(z.string()),
});

export const configSchema = z.strictObject({
  agent: agentSchema,
  environment: environmentSchema,
  model: modelSchema,
  run: z._default(runSchema, {}),
});

export type AgentConfig = z.output<typeof agentSchema>;
export type EnvironmentConfig = z.output<typeof environmentSchema>;
export type LocalEnvironmentConfig = z.output<typeof localEnvironmentSchema>;
export type DockerEnvironmentConfig = z.output<typeof dockerEnvironmentSchema>;
export type BubblewrapEnvironmentConfig = z.output<typeof bubblewrapEnvironmentSchema>;
export type KubernetesEnvironmentConfig = z.output<typeof kubernetesEnvironmentSchema>;
export type ModelConfig = z.output<typeof modelSchema>;
export type RunConfig = z.output<typeof runSchema>;
export type SwerunConfig = z.output<typeof configSchema>;

/**
 * Keys mini-swe-agent knows that swerun does not support, with what to do instead.
 * A config that sets one gets this message instead of silence.
 */
export const UNSUPPORTED_KEYS: Record<string, string> = {
  "agent.action_observation_template":
    "is a mini-swe-agent 1.x key; use model.observation_template (where mini-swe-agent 2.x keeps it)",
  "agent.format_error_template":
    "is a mini-swe-agent 1.x key; use model.format_error_template (where mini-swe-agent 2.x keeps it)",
  "agent.timeout_template":
    "is not supported: a timeout reaches the model through model.observation_template as output.exception_info",
  "agent.on_uncaught_exception": "is not supported: an uncaught error always ends the run and is recorded",
  "model.litellm_model_name_override": "is not supported: set model_name to the name the endpoint expects",
  "environment.executable": "is not supported: swerun talks to the Docker Engine API, not the docker CLI",
  "environment.pull_policy": "is not supported yet: a missing image is pulled, a present one is used",
};
