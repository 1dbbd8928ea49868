import type { ModelConfig } from "../config/schema.js";
import { UserError } from "../errors.js";
import type { ExecOutput, Message } from "../messages.js";
import { globalModelStats } from "./global-stats.js";
import type { Model } from "./model.js";
import { MODEL_TYPES } from "./model-types.js";
import { expandMessage } from "./multimodal.js";
import { textObservations } from "./text-actions.js";

/** Raised when a scripted model is asked for more messages than it holds. */
export class ScriptExhausted extends UserError {}

/**
 * mini-swe-agent's test hooks in a scripted output's actions: `/sleep N` waits N seconds and `/warning text`
 * prints a warning; either way the output is skipped and the next one is returned.
 */
async function isTestHook(message: Message): Promise<boolean> {
  const actions = (message.extra?.actions ?? []) as Array<{ command?: unknown }>;
  for (const action of actions) {
    const command = typeof action.command === "string" ? action.command : "";
    if (command.startsWith("/sleep ")) {
      const seconds = Number(command.slice("/sleep ".length));
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, seconds) * 1000));
      return true;
    }
    if (command.startsWith("/warning")) {
      process.stderr.write(`WARNING: ${command.slice("/warning".length)}\n`);
      return true;
    }
  }
  return false;
}

/**
 * The scripted model (mini-swe-agent's `DeterministicModel`): returns `model.outputs` in order, each as
 * written. Its `extra.actions` are the commands run (none when absent), its `extra.cost` what the call
 * cost the run (0 when absent); every call adds `cost_per_call` to the process-wide cost. Outputs are
 * answered with text observations (user messages).
 */
export class DeterministicModel implements Model {
  readonly config: ModelConfig;
  readonly name: string;
  #index = 0;

  constructor(config: ModelConfig) {
    this.config = config;
    this.name = config.model_name || this.defaultName;
  }

  protected get defaultName(): string {
    return "deterministic";
  }

  async query(): Promise<Message> {
    for (;;) {
      const outputs = this.config.outputs ?? [];
      const scripted = outputs[this.#index];
      if (!scripted) {
        throw new ScriptExhausted(
          `${this.config.model_class} model: the script has ${outputs.length} outputs and all were used (model.outputs)`,
        );
      }
      this.#index += 1;
      const message = this.scriptedMessage(structuredClone(scripted));
      if (await isTestHook(message)) continue;
      const stats = globalModelStats();
      stats.checkBeforeCall();
      stats.add(this.config.cost_per_call);
      // An output written without `extra` stays without one, as mini-swe-agent records it.
      if (message.extra) message.extra.timestamp = Date.now() / 1000;
      return message;
    }
  }

  /** A scripted output as the message it stands for: the config's record, as written. */
  protected scriptedMessage(output: Record<string, unknown>): Message {
    return output as Message;
  }

  formatObservations(
    _message: Message,
    outputs: ExecOutput[],
    templateVars: Record<string, unknown>,
  ): Message[] {
    return textObservations(outputs, this.config.observation_template, templateVars);
  }

  formatMessage(message: Message): Message {
    return expandMessage(message, this.config.multimodal_regex);
  }

  templateVars(): Record<string, unknown> {
    return { ...this.config };
  }

  serialize() {
    return { model: { ...this.config }, model_type: MODEL_TYPES[this.config.model_class] };
  }
}
