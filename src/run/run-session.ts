import { Agent, type AgentOptions } from "../agent/agent.js";
import { InteractiveAgent } from "../agent/interactive.js";
import type { AgentConfig, SwerunConfig } from "../config/schema.js";
import { TerminalInteraction } from "../console/interaction.js";
import type { Environment } from "../environments/environment.js";
import type { EventBus } from "../events.js";
import { exitOf } from "../messages.js";
import type { Model } from "../models/model.js";
import { TrajectoryWriter } from "../trajectory/writer.js";
import { fallbackPath } from "./output.js";
import type { AgentSetup, RunOptions, RunResult } from "./run-options.js";

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
