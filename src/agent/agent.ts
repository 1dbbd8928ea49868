import type { AgentConfig } from "../config/schema.js";
import type { Environment } from "../environments/environment.js";
import { errorExitMessage, exitMessage, FormatError, InterruptAgentFlow, LimitsExceeded } from "../errors.js";
import { type AgentListener, EventBus } from "../events.js";
import type { ExecOutput, ExitExtra, Message } from "../messages.js";
import { actionsOf, contentText, exitOf, messageCost } from "../messages.js";
import type { Model } from "../models/model.js";
import { renderTemplate } from "../templates/render.js";
import { AGENT_TYPES, type TrajectoryInfo, trajectoryConfig, trajectoryInfo } from "../trajectory/format.js";
import type { TrajectoryWriter } from "../trajectory/writer.js";
import { chaosPoint } from "../util/chaos.js";
import { callModel, runAction } from "./calls.js";
import { checkLimits } from "./limits.js";
import { StepAbort } from "./step-abort.js";
import { checkSubmission } from "./submission.js";
import { agentTemplateVars } from "./template-vars.js";

/** Template variables by name. */
type Vars = Record<string, unknown>;

export interface AgentOptions {
  model: Model;
  env: Environment;
  config: AgentConfig;
  bus?: EventBus;
  /** Subscribed to the bus for this agent's events (a console printer, an event log, a progress display). */
  subscribers?: AgentListener[];
  /** Where the trajectory is saved after every step; none: the run is not recorded. */
  writer?: TrajectoryWriter;
  /** Merged into the trajectory's `info` (e.g. which trajectory a replay came from). */
  info?: Record<string, unknown>;
  /** Top-level keys of the trajectory after `trajectory_format` (e.g. `instance_id`). */
  extras?: Record<string, unknown>;
  /** The agent class when the config sets none: `interactive` (mini-swe-agent's `mini`), `default` for batches. */
  defaultAgentClass?: "default" | "interactive";
  /** `info.config.agent_type` (default: mini-swe-agent's class for the agent class; batches: `AGENT_TYPES.batch`). */
  agentType?: string;
}

/**
 * The agent loop (mini-swe-agent's DefaultAgent): ask the model for commands, run them, show it the output,
 * until it submits or a limit hits. `run` builds the first messages and calls `runLoop`, which repeats `step`
 * (`query`, then `executeActions`) and saves the trajectory after each. What a step throws becomes messages in
 * `recordThrown` (exceptions carry the messages to append), and the loop ends at an exit message.
 * `InteractiveAgent` (interactive.ts) adds a person: confirmations, Ctrl-C, a new task instead of the exit.
 */
export class Agent {
  readonly model: Model;
  readonly env: Environment;
  readonly config: AgentConfig;
  readonly bus: EventBus;
  readonly messages: Message[] = [];
  info: Record<string, unknown>;
  /** The writer of this agent's trajectory, if it has one. */
  readonly trajectoryWriter: TrajectoryWriter | undefined;
  #cost = 0;
  #nCalls = 0;
  #formatErrors = 0;
  #vars: Vars = {};
  #startedAt = Date.now();
  /** Cuts the running step's model call or command short (stop, Ctrl-C). */
  protected readonly stepAbort = new StepAbort();
  #serializedConfig: TrajectoryInfo["config"] | undefined;
  readonly #options: AgentOptions;

  constructor(options: AgentOptions) {
    this.model = options.model;
    this.env = options.env;
    this.config = options.config;
    this.bus = options.bus ?? new EventBus();
    for (const subscriber of options.subscribers ?? []) this.bus.subscribe(subscriber);
    this.info = options.info ?? {};
    this.trajectoryWriter = options.writer;
    this.#options = options;
  }

  /** Dollars spent on model calls so far. */
  get cost(): number {
    return this.#cost;
  }

  /** Model calls so far (the step count). */
  get nCalls(): number {
    return this.#nCalls;
  }

  /** mini-swe-agent's agent class whose behaviour this run follows (`agent_class`; see `executeActions`). */
  get agentClass(): "default" | "interactive" {
    return this.config.agent_class ?? this.#options.defaultAgentClass ?? "interactive";
  }

  /** Runs until an exit message; returns its `extra`. Uncaught errors are recorded, then re-thrown. */
  async run(task: string, extraVars: Vars = {}): Promise<ExitExtra> {
    this.#prepare({ task, ...extraVars });
    // The raw task, for reports (the messages hold only the rendered prompt); mini-swe-agent ignores it.
    this.info = { ...this.info, task };
    this.bus.emitNow({ type: "run_start", task });
    try {
      const system = this.render(this.config.system_template, "system_template");
      const instance = this.render(this.config.instance_template, "instance_template");
      this.#add(this.#format({ role: "system", content: system }));
      this.#add(this.#format({ role: "user", content: instance }));
    } catch (error) {
      await this.recordThrown(error); // a template error: recorded and saved, then re-thrown
    }
    return this.runLoop();
  }

  /** Takes over a conversation recorded elsewhere (replay, --continue), unannounced; `runLoop()` goes on from there. */
  restore(messages: Message[], usage: { nCalls: number; cost: number }, extraVars: Vars = {}): void {
    this.#prepare(extraVars);
    this.messages.push(...messages);
    this.#nCalls = usage.nCalls;
    this.#cost = usage.cost;
  }

  #prepare(extraVars: Vars): void {
    this.#startedAt = Date.now();
    this.#vars = { ...this.config, ...this.env.templateVars(), ...this.model.templateVars(), ...extraVars };
  }

  /** Steps until the last message is an exit message, saving after every step; returns the exit's `extra`. */
  async runLoop(): Promise<ExitExtra> {
    this.bus.emitNow({
      type: "agent_start",
      model: this.model.name,
      cwd: String(this.env.serialize().environment.cwd ?? ""),
      system_prompt: contentText(this.messages.find((m) => m.role === "system")?.content ?? ""),
      messages: this.messages.length,
    });
    let exit: ExitExtra | undefined;
    while (!exit) {
      try {
        await this.step();
        this.#formatErrors = 0;
      } catch (thrown) {
        await this.recordThrown(thrown); // an unexpected error is saved, flushed and re-thrown from here
      }
      this.save();
      exit = exitOf(this.messages);
    }
    await this.flush();
    this.#emitEnd(exit);
    return exit;
  }

  /**
   * Turns what a step threw into messages: a format error fed back to the model (or the exit after too many),
   * the messages an `InterruptAgentFlow` carries, the exit of a stopped run. Anything else is unexpected:
   * recorded as the exit message, saved, then re-thrown.
   */
  protected async recordThrown(error: unknown): Promise<void> {
    if (error instanceof FormatError) {
      // The call was paid before its reply failed to parse; mini-swe-agent's feedback message carries the cost.
      const paid = error.messages[0];
      if (paid && paid.role !== "assistant") this.#cost += messageCost(paid);
      this.addMessages(...error.messages);
      this.#formatErrors += 1;
      const content = String(error.messages.at(-1)?.content ?? "");
      this.bus.emitNow({ type: "format_error", consecutive: this.#formatErrors, content });
      const max = this.config.max_consecutive_format_errors;
      if (max > 0 && this.#formatErrors >= max) this.#add(exitMessage("RepeatedFormatError"));
    } else if (error instanceof InterruptAgentFlow) {
      this.addMessages(...error.messages);
      const exit = exitOf(this.messages);
      if (error instanceof LimitsExceeded && exit)
        this.bus.emitNow({ type: "limit_reached", exit_status: exit.exit_status });
    } else if (this.stepAbort.stopStatus !== undefined) {
      this.#add(exitMessage(this.stepAbort.stopStatus));
    } else {
      const exit = errorExitMessage(error);
      this.#add(this.#format(exit));
      this.save();
      await this.flush();
      this.#emitEnd(exit.extra);
      throw error;
    }
  }

  /** Waits until the trajectory on disk holds every message so far. */
  async flush(): Promise<void> {
    await this.trajectoryWriter?.flush();
  }

  /** End the run as soon as possible with this exit status (second Ctrl-C, SIGTERM, no TTY; batch runs say Interrupted). */
  stop(exitStatus = "UserInterruption"): void {
    this.stepAbort.stop(exitStatus);
  }

  /** One step: query the model, run its actions, append the observations. */
  async step(): Promise<void> {
    this.stepAbort.renew();
    await this.beforeQuery();
    const message = await this.query();
    this.stepAbort.throwIfStopped();
    await this.executeActions(message);
  }

  /** Before each model call: a stopped run ends here (the interactive agent also asks the user after Ctrl-C). */
  protected async beforeQuery(): Promise<void> {
    this.stepAbort.throwIfStopped();
  }

  /** Asks the model for the next message (after checking the step, cost and time limits) and appends it. */
  async query(): Promise<Message> {
    checkLimits(this.config, this.#counters());
    const call = this.#nCalls + 1;
    const signal = this.stepAbort.signal;
    const counted = () => {
      this.#nCalls = call;
    };
    const message = await callModel(this.model, this.messages, { call, signal, bus: this.bus, counted });
    this.#add(message);
    return message;
  }

  /**
   * Runs the message's actions and appends their observations. As mini-swe-agent, the command that submitted
   * gets no observation: its `interactive` agent records the outputs before it (the model answers the rest as
   * not executed); `default` records none of that step.
   */
  async executeActions(message: Message): Promise<void> {
    const outputs: ExecOutput[] = [];
    const context = { step: this.nCalls, signal: this.stepAbort.signal, bus: this.bus };
    let completed = false;
    try {
      for (const action of actionsOf(message)) {
        const output = await runAction(this.env, action, context);
        if (this.stepAbort.stopStatus === undefined) checkSubmission(output, action);
        outputs.push(output);
        this.stepAbort.throwIfStopped();
      }
      completed = true;
    } finally {
      if (completed || this.agentClass === "interactive") {
        const observations = this.model.formatObservations(message, outputs, this.templateVars());
        this.addMessages(...observations.map((observation) => this.#format(observation)));
      }
    }
  }

  /** Template variables: configs, environment and model variables, the task, and the run's counters. */
  templateVars(): Vars {
    return agentTemplateVars(this.#vars, this.#counters());
  }

  #counters() {
    return { nCalls: this.#nCalls, cost: this.#cost, elapsed: this.elapsedSeconds() };
  }

  render(template: string, name: string, vars: Vars = {}): string {
    chaosPoint(`render:${name}`);
    return renderTemplate(template, { ...this.templateVars(), ...vars }, name);
  }

  elapsedSeconds(): number {
    return Math.floor((Date.now() - this.#startedAt) / 1000);
  }

  /** The trajectory's `info` as mini-swe-agent writes it. */
  serialize(): TrajectoryInfo {
    // The configs do not change during a run, so they are serialized once (and the writer encodes them once).
    this.#serializedConfig ??= trajectoryConfig(
      this.config,
      this.model.serialize(),
      this.env.serialize(),
      this.#options.agentType ?? AGENT_TYPES[this.agentClass],
    );
    const usage = { cost: this.#cost, apiCalls: this.#nCalls };
    return trajectoryInfo(this.#serializedConfig, usage, this.messages.at(-1), this.info);
  }

  save(): void {
    const writer = this.trajectoryWriter;
    if (!writer) return;
    writer.save(this.serialize(), this.messages, this.#options.extras);
    this.bus.emitNow({ type: "saved", path: writer.path });
  }

  /** Appends messages (a replay's recorded ones, a person's), counting an assistant message's cost. */
  addMessages(...messages: Message[]): void {
    for (const message of messages) this.#add(message);
  }

  /** A message the agent makes, as the model records it (mini-swe-agent's `format_message`). */
  #format(message: Message): Message {
    return this.model.formatMessage ? this.model.formatMessage(message) : message;
  }

  #add(message: Message): void {
    if (message.role === "assistant") this.#cost += messageCost(message);
    this.messages.push(message);
    this.bus.emitNow({ type: "message", message });
  }

  #emitEnd({ exit_status, submission }: ExitExtra): void {
    this.bus.emitNow({ type: "run_end", exit_status, submission, cost: this.cost, api_calls: this.nCalls });
  }
}
