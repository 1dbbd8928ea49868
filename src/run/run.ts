import { rmSync } from "node:fs";
import { Agent, type AgentOptions } from "../agent/agent.js";
import { InteractiveAgent } from "../agent/interactive.js";
import { type AgentConfig, onHostFiles, type SwerunConfig } from "../config/schema.js";
import { TerminalInteraction } from "../console/interaction.js";
import type { Environment, EnvironmentContext } from "../environments/environment.js";
import { createEnvironment, serializeEnvironmentConfig } from "../environments/index.js";
import { errorExitMessage, OutputPathError, StartupCommandFailed } from "../errors.js";
import { type AgentListener, EventBus } from "../events.js";
import { exitOf, type Message } from "../messages.js";
import { createModel, MODEL_TYPES, serializeModelConfig } from "../models/index.js";
import type { Model } from "../models/model.js";
import { renderTemplate } from "../templates/render.js";
import { AGENT_TYPES, trajectoryConfig, trajectoryInfo } from "../trajectory/format.js";
import { TrajectoryWriter } from "../trajectory/writer.js";
import { newRunId } from "../util/ids.js";
import { checkOutputPath, fallbackPath } from "./output.js";
import { copySetupDir } from "./setup-dir.js";
import { abortStartup, onInterruptSignals } from "./signals.js";

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

/** The model of a config: the person at the terminal in human mode, else `createModel`. */
export async function createRunModel(config: SwerunConfig, bus: EventBus): Promise<Model> {
  if (config.agent.mode === "human")
    return new (await import("../console/human-model.js")).HumanModel(config.model);
  return createModel(config.model, { emit: (event) => bus.emit(event) });
}

/**
 * A started run: its environment is up and `env_startup_command` has run. `createAgent` builds the agent
 * (with its trajectory writer, subscribers and interaction); `finish` reports how it ended; `close` tears
 * everything down (environment, signal handlers) and must be called on every path.
 */
export class RunSession {
  readonly options: RunOptions;
  readonly config: SwerunConfig;
  readonly env: Environment;
  readonly bus: EventBus;
  readonly model: Model;
  /** The temporary copy of `run.setup_dir` the local environment runs in, if the run made one. */
  readonly workdir: string | undefined;
  /** The agent running now (the last one created). */
  agent: Agent | undefined;
  readonly #output: string | undefined;
  readonly #signals: { reset: () => void; dispose: () => void } | undefined;
  #closed = false;

  constructor(
    options: RunOptions,
    parts: {
      env: Environment;
      bus: EventBus;
      model: Model;
      output: string | undefined;
      workdir: string | undefined;
      signals: { reset: () => void; dispose: () => void } | undefined;
    },
  ) {
    this.options = options;
    this.config = options.config;
    this.env = parts.env;
    this.bus = parts.bus;
    this.model = parts.model;
    this.#output = parts.output;
    this.workdir = parts.workdir;
    this.#signals = parts.signals;
  }

  /** Builds an agent on this run's environment, bus and trajectory path; it becomes `agent`. */
  createAgent(setup: AgentSetup = {}): Agent {
    const { options } = this;
    const interactive = Boolean(options.interactive) && setup.interactive !== false;
    const base = { ...this.config.agent, ...setup.agent };
    const config: AgentConfig = {
      ...base,
      mode: interactive ? base.mode : "yolo",
      output_path: this.#output ?? base.output_path,
    };
    const output = this.#output;
    // A trajectory that can be written nowhere: the run stops at once (nothing it does could be recorded).
    const onFailure = (error: Error) => agent.stop(error.name);
    const agentOptions: AgentOptions = {
      model: setup.model ?? this.model,
      env: this.env,
      config,
      bus: this.bus,
      subscribers: setup.subscribers ?? [],
      ...(output
        ? {
            writer: new TrajectoryWriter(output, {
              ...(options.trajectoryFallback === false ? {} : { fallback: fallbackPath(output) }),
              holdLast: Boolean(options.holdLastSave),
              onFailure,
            }),
          }
        : {}),
      info: { ...options.info, ...setup.info },
      extras: { ...options.extras, ...setup.extras },
      ...(options.defaultAgentClass ? { defaultAgentClass: options.defaultAgentClass } : {}),
      ...(options.agentType ? { agentType: options.agentType } : {}),
    };
    const agent = interactive
      ? new InteractiveAgent({
          ...agentOptions,
          interaction: new TerminalInteraction(config.mode, config.whitelist_actions, undefined, () =>
            this.#signals?.reset(),
          ),
        })
      : new Agent(agentOptions);
    this.agent = agent;
    options.hooks?.onAgent?.(agent);
    return agent;
  }

  /** How the run ended, once `agent`'s trajectory is on disk; calls the `onEnd` hook. */
  async finish(agent: Agent, error?: unknown): Promise<RunResult> {
    let failure = error;
    try {
      await agent.flush();
    } catch (writeError) {
      failure ??= writeError;
    }
    const exit = exitOf(agent.messages);
    const writer = agent.trajectoryWriter;
    const result: RunResult = {
      exit_status: exit?.exit_status ?? "",
      submission: exit?.submission ?? "",
      cost: agent.cost,
      api_calls: agent.nCalls,
      trajectory: writer?.failed ? undefined : writer?.path,
      ...(writer?.failure ? { trajectoryFailure: writer.failure } : {}),
      ...(this.workdir ? { workdir: this.workdir } : {}),
      ...(failure === undefined ? {} : { error: failure }),
      messages: agent.messages,
      ...(writer && this.options.holdLastSave
        ? { completeTrajectory: (extra?: Record<string, unknown>) => writer.complete(extra) }
        : {}),
    };
    await this.options.hooks?.onEnd?.(result);
    return result;
  }

  /** Closes the environment and removes the signal handlers. Safe to call twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#signals?.dispose();
    this.options.hooks?.onAgent?.(undefined);
    await this.env.close();
  }
}

/**
 * Starts a run: checks the output path (OutputPathError before anything else), builds the model, starts the
 * environment and runs `run.env_startup_command` (StartupCommandFailed when it exits non-zero). On failure
 * everything started so far is torn down and the error is thrown; `failedRun` records it.
 */
export async function openRun(options: RunOptions): Promise<RunSession> {
  const { config } = options;
  const output = options.output === undefined ? undefined : checkOutputPath(options.output);
  const bus = options.bus ?? new EventBus();
  for (const subscriber of options.subscribers ?? []) bus.subscribe(subscriber);
  let session: RunSession | undefined;
  const signals = options.handleSignals
    ? onInterruptSignals({
        interrupt: () => {
          const agent = session?.agent;
          if (!agent) abortStartup();
          else if (agent instanceof InteractiveAgent)
            agent.interrupt(); // it asks the user what next
          else agent.stop();
        },
        stop: () => (session?.agent ? session.agent.stop() : abortStartup()),
      })
    : undefined;
  let env: Environment | undefined = options.environment;
  let workdir: string | undefined;
  try {
    const setupDir = config.run.setup_dir;
    let environment = config.environment;
    if (setupDir && !env && onHostFiles(environment)) {
      workdir = copySetupDir(setupDir);
      environment = { ...environment, cwd: workdir };
    }
    const given = options.model ?? (await createRunModel(config, bus));
    env ??= await createEnvironment(environment, {
      runId: options.runId ?? newRunId(),
      ...(options.instanceId ? { instanceId: options.instanceId } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.onPodPhase ? { onPodPhase: options.onPodPhase } : {}),
    });
    await runStartupCommand(env, config, options.startupVars ?? options.vars ?? {});
    const model = typeof given === "function" ? await given(env) : given;
    session = new RunSession(options, { env, bus, model, output, workdir, signals });
    return session;
  } catch (error) {
    signals?.dispose();
    await env?.close().catch(() => {});
    // The run never started: its copy of run.setup_dir is of no use (a started run's is the command's to end).
    if (workdir) rmSync(workdir, { recursive: true, force: true });
    throw error;
  }
}

async function runStartupCommand(env: Environment, config: SwerunConfig, vars: Record<string, unknown>) {
  const source = config.run.env_startup_command;
  if (!source) return;
  const command = renderTemplate(source, vars, "run.env_startup_command");
  const output = await env.execute({ command });
  if (output.returncode !== 0) {
    throw new StartupCommandFailed(
      `run.env_startup_command exited with ${output.returncode}: ${output.output.trim().slice(-2000)}`,
    );
  }
}

/**
 * Records a run that failed before its agent existed (output check aside): a trajectory holding only the
 * exit message, with the configs as their classes would have recorded them. Calls the `onEnd` hook.
 */
export async function failedRun(options: RunOptions, error: unknown): Promise<RunResult> {
  const exit = errorExitMessage(error);
  const result: RunResult = {
    exit_status: exit.extra.exit_status,
    submission: "",
    cost: 0,
    api_calls: 0,
    trajectory: undefined,
    error,
    messages: [exit],
  };
  if (options.output !== undefined && !(error instanceof OutputPathError)) {
    const { config } = options;
    const model =
      config.agent.mode === "human" && options.interactive
        ? { model: { model_name: "human" }, model_type: MODEL_TYPES.human }
        : serializeModelConfig(config.model);
    const agentConfig = { ...config.agent, output_path: options.output };
    const info = trajectoryInfo(
      trajectoryConfig(
        agentConfig,
        model,
        serializeEnvironmentConfig(config.environment),
        options.agentType ??
          AGENT_TYPES[config.agent.agent_class ?? options.defaultAgentClass ?? "interactive"],
      ),
      { cost: 0, apiCalls: 0 },
      exit,
      options.info,
    );
    const fallback = options.trajectoryFallback === false ? {} : { fallback: fallbackPath(options.output) };
    const writer = new TrajectoryWriter(options.output, fallback);
    writer.save(info, [exit], options.extras);
    try {
      await writer.flush();
      result.trajectory = writer.path;
    } catch {
      // no path could be written: the result says no trajectory exists, and why
    }
    if (writer.failure) result.trajectoryFailure = writer.failure;
  }
  await options.hooks?.onEnd?.(result);
  return result;
}

/** A run that failed before its agent started, with the raw task as the agent records it (reports read it). */
function failedStart(task: string, options: RunOptions, error: unknown): Promise<RunResult> {
  return failedRun({ ...options, info: { ...options.info, task } }, error);
}

/**
 * The sequence of a SWE-bench instance (a batch's or `swebench-single`'s): `prepare` what the task needs (its
 * checkout or image), then `runTask`; whatever throws on the way (but the `passThrough` errors, thrown on)
 * is recorded as a run that failed before its agent started (`failedRun`).
 */
export async function runPreparedTask(
  task: string,
  options: RunOptions,
  prepare: () => Promise<void>,
  passThrough: (error: unknown) => boolean = () => false,
): Promise<RunResult> {
  try {
    await prepare();
    return await runTask(task, options);
  } catch (error) {
    if (passThrough(error)) throw error;
    return failedStart(task, options, error);
  }
}

/**
 * Runs `task` from start to end: `openRun`, one agent, `agent.run`, `finish`, `close`. Never throws for what
 * happens during the run (a failed startup command, a broken environment, a template error): that is recorded
 * in the trajectory and returned in `result.error`. Throws OutputPathError when the output cannot be written.
 */
export async function runTask(task: string, options: RunOptions): Promise<RunResult> {
  let session: RunSession;
  try {
    session = await openRun(options);
  } catch (error) {
    if (error instanceof OutputPathError) throw error;
    return failedStart(task, options, error);
  }
  try {
    const agent = session.createAgent();
    let error: unknown;
    try {
      await agent.run(task, options.vars ?? {});
    } catch (thrown) {
      error = thrown;
    }
    return await session.finish(agent, error);
  } finally {
    await session.close();
  }
}
