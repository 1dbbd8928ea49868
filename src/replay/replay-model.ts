import { exitMessage, FormatError, InterruptAgentFlow, Submitted } from "../errors.js";
import type { AssistantMessage, ExecOutput, Message } from "../messages.js";
import type { Model } from "../models/model.js";
import { observationsFor } from "../models/text-actions.js";
import { LEGACY_SUBMIT_MARKER, type RecordedRun, type RecordedStep } from "./recorded.js";

/** The exit status of a replay that stopped before the recorded run ended (`--until`, or a handover to a model). */
export const REPLAY_STOPPED = "ReplayStopped";

/** Ends the replay part of a run: its message is the `ReplayStopped` exit. */
export class ReplayStopped extends InterruptAgentFlow {}

/** What the replay of one step produced, reported as soon as the step is done. */
export interface ReplayedStep {
  step: RecordedStep;
  /** The new outputs of its actions (fewer than the actions when the run stopped early). */
  outputs: ExecOutput[];
  /** The observation messages rendered from them. */
  messages: Message[];
}

export interface ReplayModelOptions {
  run: RecordedRun;
  /** Replay this many steps, then stop (default: all). */
  until?: number;
  /** Stop instead of ending as the recording does, so a model can take over (`--continue`). */
  handover?: boolean;
  /** Renders the new observations; the recorded run's template, so the conversation reads as it did. */
  observationTemplate: string;
  /** The recorded `info.config.model` (template variables and this model's serialization). */
  recordedModel?: Record<string, unknown>;
  /** Variables for the observation template besides the agent's (the environment's). */
  templateVars?: Record<string, unknown>;
  /** Adds recorded messages that came between two model calls (interruption notes) to the conversation. */
  addMessages: (messages: Message[]) => void;
  /** Called once per replayed step, after its actions ran (or at once for a step that runs nothing). */
  onStep?: (replayed: ReplayedStep) => void;
}

const clone = <T>(value: T): T => structuredClone(value);

/**
 * Stands in for the model of a recorded run: returns its assistant messages in order with their recorded
 * actions, so the agent loop runs them unchanged against a new environment. Format errors and rejected
 * actions are added as recorded; the observations are the new ones. After the last recorded step the
 * run ends as the recording did (its exit message, unless it submitted: then the replay must submit too).
 */
export class ReplayModel implements Model {
  readonly name: string;
  readonly #options: ReplayModelOptions;
  readonly #until: number;
  #index = 0;
  #current: RecordedStep | undefined;
  #lastOutput: ExecOutput | undefined;

  constructor(options: ReplayModelOptions) {
    this.#options = options;
    this.#until = Math.min(options.until ?? options.run.steps.length, options.run.steps.length);
    const recordedName = options.recordedModel?.model_name;
    this.name = typeof recordedName === "string" && recordedName ? recordedName : "replay";
  }

  /** How many recorded steps have been replayed so far. */
  get replayedSteps(): number {
    return this.#index;
  }

  async query(): Promise<Message> {
    const step = this.#options.run.steps[this.#index];
    if (!step || this.#index >= this.#until) throw this.#end();
    this.#index += 1;
    this.#current = step;
    if (step.before.length > 0) this.#options.addMessages(clone(step.before));
    if (step.kind !== "actions") {
      this.#options.onStep?.({ step, outputs: [], messages: [] });
      const recorded = clone([...(step.assistant ? [step.assistant] : []), ...step.after]);
      throw step.kind === "format_error" ? new FormatError(...recorded) : new InterruptAgentFlow(...recorded);
    }
    const assistant = clone(step.assistant as AssistantMessage); // an actions step has one (see recordedRun)
    return { ...assistant, extra: { ...(assistant.extra ?? {}), actions: clone(step.actions) } };
  }

  /** The recorded run's end, once its steps are replayed; a stop when it ends early or hands over. */
  #end(): InterruptAgentFlow {
    const { run, handover } = this.#options;
    const n = this.#index;
    const stop = (content: string) => new ReplayStopped(exitMessage(REPLAY_STOPPED, "", content));
    if (handover) return stop(`Replayed ${n} recorded step${n === 1 ? "" : "s"}; a model takes over.`);
    if (n < run.steps.length)
      return stop(`Replay stopped after step ${n} of ${run.steps.length} (--until ${n}).`);
    if (!run.exit) return stop(`The recorded trajectory ends after step ${n} without an exit message.`);
    if (run.exitStatus !== "Submitted") return new InterruptAgentFlow(...clone([...run.trailing, run.exit]));
    const legacy = this.#legacySubmission();
    if (legacy !== undefined) return new Submitted(exitMessage("Submitted", legacy, legacy));
    return stop(`The recorded run submitted after step ${n}; the replay did not.`);
  }

  /** Output that starts with mini-swe-agent's old marker submits, as it did in the recorded run. */
  #legacySubmission(): string | undefined {
    const text = this.#lastOutput?.output.trimStart() ?? "";
    const newline = text.indexOf("\n");
    const first = newline < 0 ? text : text.slice(0, newline);
    if (first.trim() !== LEGACY_SUBMIT_MARKER) return undefined;
    return newline < 0 ? "" : text.slice(newline + 1);
  }

  formatObservations(
    message: Message,
    outputs: ExecOutput[],
    templateVars: Record<string, unknown>,
  ): Message[] {
    const vars = { ...this.#options.templateVars, ...this.templateVars(), ...templateVars };
    const messages = observationsFor(message, outputs, this.#options.observationTemplate, vars);
    this.#lastOutput = outputs.at(-1);
    if (this.#current) this.#options.onStep?.({ step: this.#current, outputs, messages });
    return messages;
  }

  /** The recorded model config whole, as mini-swe-agent's templates saw it (a scripted model's `outputs` too). */
  templateVars(): Record<string, unknown> {
    return { ...this.#options.recordedModel };
  }

  serialize() {
    const { outputs: _outputs, ...model } = this.#options.recordedModel ?? {};
    return { model, model_type: "swerun.replay.ReplayModel" };
  }
}
