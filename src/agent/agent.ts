import type { AgentConfig } from "../config/schema.js";
import type { Environment } from "../environments/environment.js";
import {
  errorExitMessage,
  exitMessage,
  FormatError,
  InterruptAgentFlow,
  LimitsExceeded,
  Submitted,
  TimeExceeded,
  UserInterruption,
} from "../errors.js";
import { type AgentListener, EventBus, type EventInput } from "../events.js";
import type { Action, ExecOutput, Message } from "../messages.js";
import { contentText, messageCost } from "../messages.js";
import type { Model } from "../models/model.js";
import { mkNum } from "../python/number.js";
import { renderTemplate } from "../templates/render.js";
import { AGENT_TYPES, type TrajectoryInfo, trajectoryConfig, trajectoryInfo } from "../trajectory/format.js";
import type { TrajectoryWriter } from "../trajectory/writer.js";
import { chaosPoint } from "../util/chaos.js";
import { monotonicMs } from "../util/clock.js";
import { type Interaction, rejectionMessages } from "./interaction.js";
import { checkSubmission } from "./submission.js";

export interface AgentOptions {
  model: Model;
  env: Environment;
  config: AgentConfig;
  bus?: EventBus;
  /** Subscribed to the bus for this agent's events (a console printer, an event log, a progress display). */
  subscribers?: AgentListener[];
  /** Where the trajectory is saved after every step; none: the run is not recorded. */
  writer?: TrajectoryWriter;
  interaction?: Interaction;
  /** Merged into the trajectory's `info` (e.g. which trajectory a replay came from). */
  info?: Record<string, unknown>;
  /** Top-level keys of the trajectory after `trajectory_format` (e.g. `instance_id`). */
  extras?: Record<string, unknown>;
  /** The agent class when the config sets none: `interactive` (mini-swe-agent's `mini`), `default` for batches. */
  defaultAgentClass?: "default" | "interactive";
  /** `info.config.agent_type` (default: mini-swe-agent's class for the agent class; batches: `AGENT_TYPES.batch`). */
  agentType?: string;
}

/** Template variables that mini-swe-agent's configs type as floats. */
const FLOAT_VARS = ["cost_limit", "cost_per_call", "model_cost"];

/**
 * The agent loop: ask the model for commands, run them, show it the output, until it submits or a limit hits.
 * `run` builds the first messages and calls `runLoop`, which repeats `step` (`query`, then `executeActions`)
 * and saves the trajectory after each; what a step throws becomes messages in `#recordThrown` (exceptions carry
 * the messages to append, as in mini-swe-agent), and the loop ends when the last message is an exit message.
 */
export class Agent {
  readonly model: Model;
  readonly env: Environment;
  readonly config: AgentConfig;
  readonly bus: EventBus;
  readonly messages: Message[] = [];
  #cost = 0;
  #nCalls = 0;
  info: Record<string, unknown>;
  readonly #interaction: Interaction | undefined;
  readonly #extras: Record<string, unknown>;
  readonly #defaultAgentClass: "default" | "interactive";
  readonly #agentType: string | undefined;
  readonly #writer: TrajectoryWriter | undefined;
  #vars: Record<string, unknown> = {};
  #startedAt = Date.now();
  #formatErrors = 0;
  /** Aborts the running step's model call or command (Ctrl-C, stop). */
  #stepAbort = new AbortController();
  #interrupted = false;
  #stopped = false;
  #stopStatus = "UserInterruption";
  #config: TrajectoryInfo["config"] | undefined;

  constructor(options: AgentOptions) {
    this.model = options.model;
    this.env = options.env;
    this.config = options.config;
    this.bus = options.bus ?? new EventBus();
    for (const subscriber of options.subscribers ?? []) this.bus.subscribe(subscriber);
    this.#interaction = options.interaction;
    this.info = options.info ?? {};
    this.#extras = options.extras ?? {};
    this.#defaultAgentClass = options.defaultAgentClass ?? "interactive";
    this.#agentType = options.agentType;
    this.#writer = options.writer;
  }

  /** Dollars spent on model calls so far. */
  get cost(): number {
    return this.#cost;
  }

  /** Model calls so far (the step count). */
  get nCalls(): number {
    return this.#nCalls;
  }

  /** The writer of this agent's trajectory, if it has one. */
  get trajectoryWriter(): TrajectoryWriter | undefined {
    return this.#writer;
  }

  /** Runs until an exit message; returns its `extra` (exit_status, submission, ...). Uncaught errors are recorded, then re-thrown. */
  async run(task: string, extraVars: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    this.#prepare({ task, ...extraVars });
    // The raw task, for reports (the messages hold only the rendered prompt); mini-swe-agent ignores it.
    this.info = { ...this.info, task };
    this.#emit({ type: "run_start", task });
    try {
      const system = this.render(this.config.system_template, "system_template");
      const instance = this.render(this.config.instance_template, "instance_template");
      this.#add(this.#format({ role: "system", content: system }));
      this.#add(this.#format({ role: "user", content: instance }));
    } catch (error) {
      await this.#recordThrown(error); // a template error: recorded and saved, then re-thrown
    }
    return this.runLoop();
  }

  /**
   * Takes over a conversation recorded elsewhere (replay, --continue): its messages and usage so far, and the
   * template variables, without announcing them as new events. Then `runLoop()` runs the loop from there.
   */
  restore(
    messages: Message[],
    usage: { nCalls: number; cost: number },
    extraVars: Record<string, unknown> = {},
  ): void {
    this.#prepare(extraVars);
    this.messages.push(...messages);
    this.#nCalls = usage.nCalls;
    this.#cost = usage.cost;
  }

  #prepare(extraVars: Record<string, unknown>): void {
    this.#startedAt = Date.now();
    this.#vars = { ...this.config, ...this.env.templateVars(), ...this.model.templateVars(), ...extraVars };
  }

  /**
   * The loop: step until the last message is an exit message, saving the trajectory after every step, from the
   * current messages (after `run` builds the first ones, or after `restore`). Returns the exit message's `extra`.
   */
  async runLoop(): Promise<Record<string, unknown>> {
    this.#emit({
      type: "agent_start",
      model: this.model.name,
      cwd: String(this.env.serialize().environment.cwd ?? ""),
      system_prompt: contentText(this.messages.find((m) => m.role === "system")?.content ?? ""),
      messages: this.messages.length,
    });
    for (;;) {
      try {
        await this.step();
        this.#formatErrors = 0;
      } catch (thrown) {
        await this.#recordThrown(thrown); // an unexpected error is saved, flushed and re-thrown from here
      }
      this.save();
      if (this.messages.at(-1)?.role === "exit") break;
    }
    await this.flush();
    const extra = this.messages.at(-1)?.extra ?? {};
    this.#emitEnd(extra);
    return extra;
  }

  /**
   * Turns what a step threw into messages: a format error fed back to the model (or the exit after too many),
   * a submission the user may turn into a new task, the messages an `InterruptAgentFlow` carries, the exit of a
   * stopped run. Anything else is unexpected: recorded as the exit message, saved, then re-thrown.
   */
  async #recordThrown(error: unknown): Promise<void> {
    if (error instanceof FormatError) {
      // The call was paid before its reply failed to parse; mini-swe-agent's feedback message carries the cost.
      const paid = error.messages[0];
      if (paid && paid.role !== "assistant") this.#cost += messageCost(paid);
      this.#addAll(error.messages);
      this.#formatErrors += 1;
      const content = String(error.messages.at(-1)?.content ?? "");
      this.#emit({ type: "format_error", consecutive: this.#formatErrors, content });
      const max = this.config.max_consecutive_format_errors;
      if (max > 0 && this.#formatErrors >= max) this.#add(exitMessage("RepeatedFormatError"));
      return;
    }
    if (error instanceof Submitted && this.#interaction && this.config.confirm_exit) {
      const exit = error.messages.at(-1);
      const note = exit ? await this.#interaction.confirmExit(exit) : null;
      if (note !== null) {
        this.#addAll(error.messages.filter((message) => message.role !== "exit"));
        // mini-swe-agent's words for a new task typed instead of accepting the submission.
        const content = `The user added a new task: ${note}`;
        this.#add({ role: "user", content, extra: { interrupt_type: "UserNewTask" } });
        return;
      }
    }
    if (error instanceof InterruptAgentFlow) {
      this.#addAll(error.messages);
      const status = this.messages.at(-1)?.extra?.exit_status;
      if (error instanceof LimitsExceeded && typeof status === "string") {
        this.#emit({ type: "limit_reached", exit_status: status });
      }
      return;
    }
    if (this.#stopped) {
      this.#add(exitMessage(this.#stopStatus));
      return;
    }
    if (this.#interrupted) return; // an aborted model call: the next step asks the user
    this.#add(this.#format(errorExitMessage(error)));
    this.save();
    await this.flush();
    this.#emitEnd(this.messages.at(-1)?.extra ?? {});
    throw error;
  }

  /** Waits until the trajectory on disk holds every message so far. */
  async flush(): Promise<void> {
    await this.#writer?.flush();
  }

  /** Ctrl-C: stop the running step (command or model call) and ask the user what to do next. */
  interrupt(): void {
    this.#interrupted = true;
    this.#stepAbort.abort(new Error("interrupted by the user"));
  }

  /** End the run as soon as possible with this exit status (second Ctrl-C, SIGTERM, no TTY; batch runs say Interrupted). */
  stop(exitStatus = "UserInterruption"): void {
    this.#stopStatus = exitStatus;
    this.#stopped = true;
    this.#stepAbort.abort(new Error("stopped by the user"));
  }

  /** One step: query the model, run its actions, append the observations. */
  async step(): Promise<void> {
    this.#stepAbort = new AbortController();
    await this.#handleInterruption();
    const message = await this.query();
    this.#throwIfStopped();
    await this.executeActions(message);
  }

  /** Asks the model for the next message (after checking the step, cost and time limits) and appends it. */
  async query(): Promise<Message> {
    const { step_limit, cost_limit, wall_time_limit_seconds } = this.config;
    if ((step_limit > 0 && this.nCalls >= step_limit) || (cost_limit > 0 && this.cost >= cost_limit)) {
      throw new LimitsExceeded(exitMessage("LimitsExceeded"));
    }
    if (wall_time_limit_seconds > 0 && this.elapsedSeconds() >= wall_time_limit_seconds) {
      throw new TimeExceeded(exitMessage("TimeExceeded"));
    }
    const call = this.#nCalls + 1;
    const started = monotonicMs();
    this.#emit({ type: "model_call_start", call });
    const finish = (message: Message | undefined, replied = message !== undefined) => {
      const duration_s = (monotonicMs() - started) / 1000;
      if (message?.extra && message.extra.duration_s === undefined) message.extra.duration_s = duration_s;
      const usage = message?.extra?.usage as Record<string, unknown> | undefined;
      this.#emit({
        type: "model_call_end",
        call,
        replied,
        duration_s,
        cost: message ? messageCost(message) : 0,
        usage,
      });
    };
    let message: Message;
    try {
      message = await this.model.query(this.messages, { signal: this.#stepAbort.signal });
    } catch (error) {
      // A stand-in that ends the run instead of answering (replay's end, a human quitting) made no call.
      if (!(error instanceof InterruptAgentFlow) || error instanceof FormatError) this.#nCalls = call;
      // A reply that could not be run is a reply; so is a recorded reply a replay stands in with.
      const replied =
        error instanceof InterruptAgentFlow && error.messages.some((m) => m.role === "assistant");
      finish(
        error instanceof FormatError ? error.messages[0] : undefined,
        error instanceof FormatError || replied,
      );
      throw error;
    }
    this.#nCalls = call;
    finish(message);
    this.#add(message);
    return message;
  }

  /** Runs the message's actions (after the user confirms them, when asked to) and appends their observations. */
  async executeActions(message: Message): Promise<void> {
    const actions = (message.extra?.actions ?? []) as Action[];
    if (actions.length > 0 && this.#interaction) {
      const rejection = await this.#interaction.confirmActions(actions);
      if (rejection !== null) {
        const content = `The user rejected your command${actions.length > 1 ? "s" : ""}${rejection ? `: ${rejection}` : "."}`;
        throw new InterruptAgentFlow(...rejectionMessages(actions, content));
      }
    }
    // As mini-swe-agent: the command that submitted gets no observation. Its `interactive` agent records
    // the outputs before it (and the model answers the rest as not executed); `default` records none.
    const outputs: ExecOutput[] = [];
    let completed = false;
    try {
      for (const action of actions) {
        const output = await this.#execute(action);
        if (!this.#stopped) checkSubmission(output, action);
        outputs.push(output);
        this.#throwIfStopped();
      }
      completed = true;
    } finally {
      if (completed || this.agentClass === "interactive") {
        const observations = this.model.formatObservations(message, outputs, this.templateVars());
        this.#addAll(observations.map((observation) => this.#format(observation)));
      }
    }
  }

  /** mini-swe-agent's agent class whose behaviour this run follows (see `agent_class` in the config). */
  get agentClass(): "default" | "interactive" {
    return this.config.agent_class ?? this.#defaultAgentClass;
  }

  async #execute(action: Action): Promise<ExecOutput> {
    const step = this.nCalls;
    this.#emit({ type: "action_start", step, action });
    const started = monotonicMs();
    const output = await this.env.execute(action, { signal: this.#stepAbort.signal });
    const duration_s = (monotonicMs() - started) / 1000;
    output.extra = { ...(output.extra ?? {}), duration_s };
    this.#emit({
      type: "action_end",
      step,
      action,
      returncode: output.returncode,
      duration_s,
      output_chars: output.output.length,
      output: output.output,
      exception_info: output.exception_info,
    });
    return output;
  }

  /**
   * Template variables: configs, environment and model variables, the task, and the run's counters.
   * The fields mini-swe-agent types as floats render as Python prints a float (`3.0`, `0.0`).
   */
  templateVars(): Record<string, unknown> {
    const vars: Record<string, unknown> = {
      ...this.#vars,
      n_model_calls: this.nCalls,
      model_cost: this.cost,
      elapsed_seconds: this.elapsedSeconds(),
    };
    for (const name of FLOAT_VARS) {
      const value = vars[name];
      if (typeof value === "number") vars[name] = mkNum(value, true);
    }
    return vars;
  }

  render(template: string, name: string, vars: Record<string, unknown> = {}): string {
    chaosPoint(`render:${name}`);
    return renderTemplate(template, { ...this.templateVars(), ...vars }, name);
  }

  elapsedSeconds(): number {
    return Math.floor((Date.now() - this.#startedAt) / 1000);
  }

  /** The trajectory as mini-swe-agent writes it. */
  serialize(): TrajectoryInfo {
    // The configs do not change during a run, so they are serialized once (and the writer encodes them once).
    this.#config ??= trajectoryConfig(
      this.config,
      this.model.serialize(),
      this.env.serialize(),
      this.#agentType ?? AGENT_TYPES[this.agentClass],
    );
    const usage = { cost: this.#cost, apiCalls: this.#nCalls };
    return trajectoryInfo(this.#config, usage, this.messages.at(-1), this.info);
  }

  save(): void {
    if (!this.#writer) return;
    this.#writer.save(this.serialize(), this.messages, this.#extras);
    this.#emit({ type: "saved", path: this.#writer.path });
  }

  /** Adds messages that were built elsewhere (replay, continue). */
  addMessages(...messages: Message[]): void {
    this.#addAll(messages);
  }

  async #handleInterruption(): Promise<void> {
    this.#throwIfStopped();
    if (!this.#interrupted) return;
    this.#interrupted = false;
    if (!this.#interaction) throw new UserInterruption(exitMessage("UserInterruption"));
    const note = await this.#interaction.onInterrupt();
    this.#throwIfStopped();
    if (note) this.#add({ role: "user", content: note, extra: { interrupt_type: "UserInterruption" } });
  }

  #throwIfStopped(): void {
    if (this.#stopped) throw new UserInterruption(exitMessage(this.#stopStatus));
  }

  /** A message the agent makes, as the model records it (mini-swe-agent's `format_message`). */
  #format(message: Message): Message {
    return this.model.formatMessage ? this.model.formatMessage(message) : message;
  }

  #add(message: Message): void {
    if (message.role === "assistant") this.#cost += messageCost(message);
    this.messages.push(message);
    this.#emit({ type: "message", message });
  }

  #addAll(messages: Message[]): void {
    for (const message of messages) this.#add(message);
  }

  #emitEnd(extra: Record<string, unknown>): void {
    this.#emit({
      type: "run_end",
      exit_status: String(extra.exit_status ?? ""),
      submission: String(extra.submission ?? ""),
      cost: this.cost,
      api_calls: this.nCalls,
    });
  }

  #emit(event: EventInput): void {
    this.bus.emitNow(event);
  }
}
