import type { ExecOutput, Message } from "../messages.js";
import { DeterministicModel } from "./deterministic.js";
import { observationsFor } from "./text-actions.js";

/**
 * The scripted tool-call model (mini-swe-agent's `DeterministicToolcallModel`): outputs carry `tool_calls`
 * and `extra.actions` with their `tool_call_id`s, and are answered with `role: "tool"` messages (a tool
 * call that did not run, as not executed).
 */
export class DeterministicToolcallModel extends DeterministicModel {
  protected override get defaultName(): string {
    return "deterministic_toolcall";
  }

  override formatObservations(
    message: Message,
    outputs: ExecOutput[],
    templateVars: Record<string, unknown>,
  ): Message[] {
    return observationsFor(message, outputs, this.config.observation_template, templateVars);
  }
}
