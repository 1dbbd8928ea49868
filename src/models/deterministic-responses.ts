import type { ExecOutput, Message } from "../messages.js";
import { DeterministicModel } from "./deterministic.js";
import { responsesObservations, typedPrompt } from "./responses-items.js";

/**
 * The scripted Responses API model (mini-swe-agent's `DeterministicResponseAPIToolcallModel`): outputs are
 * response objects (`object: "response"`, `output` items, `extra.actions` with their `tool_call_id`s), prompts
 * are typed `input_text` messages, and outputs go back as `function_call_output` items. swerun gives the
 * response objects the role its readers use (`assistant`).
 */
export class DeterministicResponsesModel extends DeterministicModel {
  protected override get defaultName(): string {
    return "deterministic_response_api_toolcall";
  }

  /** A response object may be scripted without a role; it gets the one swerun's readers use. */
  protected override scriptedMessage(output: Record<string, unknown>): Message {
    return super.scriptedMessage(output.role ? output : { ...output, role: "assistant" });
  }

  override formatObservations(
    message: Message,
    outputs: ExecOutput[],
    templateVars: Record<string, unknown>,
  ): Message[] {
    return responsesObservations(message, outputs, this.config.observation_template, templateVars);
  }

  override formatMessage(message: Message): Message {
    return typedPrompt(message);
  }
}
