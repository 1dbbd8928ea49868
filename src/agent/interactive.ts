import { InterruptAgentFlow, Submitted } from "../errors.js";
import { actionsOf, type Message } from "../messages.js";
import { Agent, type AgentOptions } from "./agent.js";
import { type Interaction, rejectionMessages } from "./interaction.js";

export interface InteractiveAgentOptions extends AgentOptions {
  /** The person at the terminal (confirm and human modes, Ctrl-C); see `TerminalInteraction`. */
  interaction: Interaction;
}

/**
 * The agent loop with a person taking part (mini-swe-agent's InteractiveAgent): the model's commands wait for
 * the user's confirmation, Ctrl-C stops the running step and asks what to do next, and a submission may be
 * turned into a new task. What the agent records on a submission still follows `agent_class` (see `Agent`).
 */
export class InteractiveAgent extends Agent {
  readonly #interaction: Interaction;
  /** Ctrl-C stopped the running step; the next step asks the user first. */
  #interrupted = false;

  constructor(options: InteractiveAgentOptions) {
    super(options);
    this.#interaction = options.interaction;
  }

  /** Ctrl-C: stop the running step (command or model call) and ask the user what to do next. */
  interrupt(): void {
    this.#interrupted = true;
    this.stepAbort.abort(new Error("interrupted by the user"));
  }

  /** After Ctrl-C, asks the user before the next model call; a note goes to the model. */
  protected override async beforeQuery(): Promise<void> {
    await super.beforeQuery();
    if (!this.#interrupted) return;
    this.#interrupted = false;
    const note = await this.#interaction.onInterrupt();
    this.stepAbort.throwIfStopped();
    if (note)
      this.addMessages({ role: "user", content: note, extra: { interrupt_type: "UserInterruption" } });
  }

  /** Runs the message's actions once the user confirms them; a rejection goes to the model instead. */
  override async executeActions(message: Message): Promise<void> {
    const actions = actionsOf(message);
    if (actions.length > 0) {
      const rejection = await this.#interaction.confirmActions(actions);
      if (rejection !== null) {
        const content = `The user rejected your command${actions.length > 1 ? "s" : ""}${rejection ? `: ${rejection}` : "."}`;
        throw new InterruptAgentFlow(...rejectionMessages(actions, content));
      }
    }
    await super.executeActions(message);
  }

  /**
   * A submission the user may answer with a new task (`confirm_exit`); a model call cut short by Ctrl-C ends
   * nothing (the next step asks the user). Everything else as in `Agent`.
   */
  protected override async recordThrown(error: unknown): Promise<void> {
    if (error instanceof Submitted && this.config.confirm_exit) {
      const exit = error.messages.at(-1);
      const note = exit ? await this.#interaction.confirmExit(exit) : null;
      if (note !== null) {
        this.addMessages(...error.messages.filter((message) => message.role !== "exit"));
        // mini-swe-agent's words for a new task typed instead of accepting the submission.
        const content = `The user added a new task: ${note}`;
        this.addMessages({ role: "user", content, extra: { interrupt_type: "UserNewTask" } });
        return;
      }
    }
    const stopped = this.stepAbort.stopStatus !== undefined;
    if (this.#interrupted && !stopped && !(error instanceof InterruptAgentFlow)) return;
    await super.recordThrown(error);
  }
}
