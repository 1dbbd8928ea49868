import type { Agent } from "../agent/agent.js";
import type { AgentConfig, SwerunConfig } from "../config/schema.js";
import type { Environment, EnvironmentContext } from "../environments/environment.js";
import type { AgentListener, EventBus } from "../events.js";
import type { Message } from "../messages.js";
import type { Model } from "../models/model.js";

/**
 * Hooks into a run's life. Hooks must not throw (as event subscribers); what they need to report, they
 * report themselves.
 */
export interface RunHooks {
  /** Called with each agent once it exists, and with undefined once the run is over (a batch uses it to stop agents). */
  onAgent?: (agent: Agent | undefined) => void;
  /** Called once the run has ended and its trajectory is on disk, before the environment is closed. */
  onEnd?: (result: RunResult) => void | Promise<void>;
}

/** What a run is built from. Only `config` is required; everything else has a library-friendly default. */
export interface RunOptions {
  /** The resolved config (`loadConfig`). It is not changed. */
  config: SwerunConfig;
  /** Where the trajectory is written; checked before anything runs. Default: none is written. */
  output?: string;
  /** Labels the run's containers (`swerun cleanup --run-id`). Default: a new id. */
  runId?: string;
  instanceId?: string;
  /** Template variables for the agent's templates besides the task (e.g. `instance_id`). */
  vars?: Record<string, unknown>;
  /** Template variables of `run.env_startup_command` (a SWE-bench instance's fields, as mini-swe-agent). Default: `vars`. */
  startupVars?: Record<string, unknown>;
  /** Merged into the trajectory's `info` (e.g. which trajectory a replay came from). */
  info?: Record<string, unknown>;
  /** Top-level keys of the trajectory after `trajectory_format` (e.g. `instance_id`). */
  extras?: Record<string, unknown>;
  /** The agent class when the config sets no `agent.agent_class` (default: `interactive`, as mini-swe-agent's `mini`). */
  defaultAgentClass?: "default" | "interactive";
  /** `info.config.agent_type` to record (swebench batches: `AGENT_TYPES.batch`); default: the agent class's. */
  agentType?: string;
  /** The bus the run's events go to (default: a new one); the model's events (retries) go there too. */
  bus?: EventBus;
  /** Event subscribers: console printer, progress display, an event log. They must not throw. */
  subscribers?: AgentListener[];
  hooks?: RunHooks;
  /** A person at a terminal: confirm and human modes ask there. Otherwise the run is yolo (nobody asked). */
  interactive?: boolean;
  /**
   * Handle SIGINT/SIGTERM for this run (the CLI; a library or a batch leaves the process's signals alone):
   * Ctrl-C interrupts the step and asks (interactive) or stops the run; a second Ctrl-C or SIGTERM stops it.
   */
  handleSignals?: boolean;
  /** Use this model instead of building `config.model`; a function gets the started environment (replay). */
  model?: Model | ((env: Environment) => Model | Promise<Model>);
  /** Use this environment instead of building `config.environment`; the run closes it at the end. */
  environment?: Environment;
  /** Progress lines while the environment starts (image pulls). */
  onProgress?: (line: string) => void;
  /** Kubernetes: where the run's pod is on its way to running (EnvironmentContext's). */
  onPodPhase?: EnvironmentContext["onPodPhase"];
  /**
   * The caller completes the trajectory after the run (its timing, known once the environment is torn down):
   * the exit message is saved in place and `result.completeTrajectory` writes the whole file once, with it.
   */
  holdLastSave?: boolean;
  /**
   * When the trajectory's path cannot be written (a full disk, a folder made read-only), save to a fallback
   * path in the system temp folder (default). false: no fallback (a batch, whose outputs live in its folder:
   * the file at `output` stays as the last save that worked left it).
   */
  trajectoryFallback?: boolean;
}

/** How a run ended. */
export interface RunResult {
  exit_status: string;
  submission: string;
  cost: number;
  api_calls: number;
  /**
   * Where the trajectory is (the fallback path when the requested one failed); undefined when none was
   * written, or when a write failed and no fallback took it (`trajectoryFailure` then says why).
   */
  trajectory: string | undefined;
  /** The requested trajectory path and why writing it failed (a FileWriteError naming the file). */
  trajectoryFailure?: { path: string; error: unknown };
  /** The temporary copy of `run.setup_dir` the run worked in, if it made one. */
  workdir?: string;
  /** The error that ended the run (recorded in the trajectory): a template error, a broken environment, ... */
  error?: unknown;
  messages: Message[];
  /**
   * With `holdLastSave`: writes the trajectory's last save, `extra` added to its `info`, as the whole file
   * (without `extra`, only closes it). The caller must call it once the run ended.
   */
  completeTrajectory?: (extra?: Record<string, unknown>) => Promise<void>;
}

/** What an agent of a run can be given besides the run's own (replay's agents differ in model and limits). */
export interface AgentSetup {
  model?: Model;
  /** Overrides of `config.agent` for this agent. */
  agent?: Partial<AgentConfig>;
  /** Extra subscribers for this agent's events (subscribed to the run's bus now). */
  subscribers?: AgentListener[];
  info?: Record<string, unknown>;
  extras?: Record<string, unknown>;
  /** false: nobody is asked for this agent, even on a terminal (a replay's scripted part). Default: the run's. */
  interactive?: boolean;
}
