import type { ModelConfig } from "../config/schema.js";
import { UserError } from "../errors.js";
import type { ExecOutput, Message } from "../messages.js";
import type { Model } from "./model.js";
import { configVars, observationsFor, parseTextActions } from "./text-actions.js";

/** Raised when a scripted model is asked for more messages than it holds. */
export class ScriptExhausted extends UserError {}

/**
 * The scripted model: returns `model.outputs` in order, in mini-swe-agent's message shape
 * (`{role, content, extra: {actions: [{command}], cost}}`). An output without `extra.actions`
 * is parsed with the text-action regex, so scripted format errors behave like real ones.
 */
export class DeterministicModel implements Model {
  readonly config: ModelConfig;
  readonly name: string;
  #index = 0;

  constructor(config: ModelConfig) {
    this.config = config;
    this.name = config.model_name || "deterministic";
  }

  async query(): Promise<Message> {
    const outputs = this.config.outputs ?? [];
    const scripted = outputs[this.#index];
    if (!scripted) {
      throw new ScriptExhausted(
        `deterministic model: the script has ${outputs.length} outputs and all were used (model.outputs)`,
      );
    }
    this.#index += 1;
    const extra = { ...((scripted.extra as Record<string, unknown> | undefined) ?? {}) };
    const message: Message = {
      ...scripted,
      role: "assistant",
      content: scripted.content ?? "",
      extra: { ...extra, cost: typeof extra.cost === "number" ? extra.cost : this.config.cost_per_call },
    };
    message.extra = { ...message.extra, timestamp: Date.now() / 1000 };
    if (!Array.isArray(extra.actions)) {
      const finishReason = typeof extra.finish_reason === "string" ? extra.finish_reason : null;
      const actions = parseTextActions(
        message,
        this.config.action_regex,
        this.config.format_error_template,
        finishReason,
      );
      message.extra = { ...message.extra, actions };
    }
    return message;
  }

  formatObservations(
    message: Message,
    outputs: ExecOutput[],
    templateVars: Record<string, unknown>,
  ): Message[] {
    return observationsFor(message, outputs, this.config.observation_template, templateVars);
  }

  templateVars(): Record<string, unknown> {
    return configVars(this.config);
  }

  serialize() {
    return { model: { ...this.config }, model_type: "swerun.models.deterministic.DeterministicModel" };
  }
}
