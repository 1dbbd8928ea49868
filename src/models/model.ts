import type { ExecOutput, Message } from "../messages.js";

/** Per-call options the agent passes to a model. */
export interface QueryOptions {
  /** Aborted when the user interrupts the run; the model should stop waiting and throw. */
  signal?: AbortSignal;
}

/**
 * A language model, or something that stands in for one (scripted, replayed, a human).
 * `query` returns the assistant message with `extra.actions` and `extra.cost`; when the output cannot be
 * turned into actions it throws `FormatError` carrying the recorded assistant message and the feedback message.
 */
export interface Model {
  /** The model name as the user gave it (recorded in trajectories and preds.json). */
  readonly name: string;
  query(messages: Message[], options?: QueryOptions): Promise<Message>;
  /** Turns action outputs into the messages appended to the conversation (user or tool messages). */
  formatObservations(
    message: Message,
    outputs: ExecOutput[],
    templateVars: Record<string, unknown>,
  ): Message[];
  /**
   * The message as this model records and sends it (mini-swe-agent's `format_message`): the agent passes
   * prompts, observations and error exits through it. Absent: the message as it is.
   */
  formatMessage?(message: Message): Message;
  /** Variables this model adds to every template (its config). */
  templateVars(): Record<string, unknown>;
  /** The `info.config.model` and `info.config.model_type` of a trajectory; never holds secrets. */
  serialize(): { model: Record<string, unknown>; model_type: string };
}
