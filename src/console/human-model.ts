import type { ModelConfig } from "../config/schema.js";
import { exitMessage, UserInterruption } from "../errors.js";
import type { ExecOutput, Message } from "../messages.js";
import type { Model } from "../models/model.js";
import { configVars, observationsFor } from "../models/text-actions.js";
import { ask, PromptInterrupted } from "./prompt.js";

/** Human mode: the user types each command at the terminal instead of a model choosing it. */
export class HumanModel implements Model {
  readonly name = "human";
  readonly config: ModelConfig;
  readonly #ask: (question: string) => Promise<string>;

  constructor(config: ModelConfig, asker: (question: string) => Promise<string> = ask) {
    this.config = config;
    this.#ask = asker;
  }

  async query(): Promise<Message> {
    let command = "";
    try {
      while (!command.trim()) command = await this.#ask("command> ");
    } catch (error) {
      if (error instanceof PromptInterrupted) throw new UserInterruption(exitMessage("UserInterruption"));
      throw error;
    }
    return {
      role: "assistant",
      content: `\`\`\`mswea_bash_command\n${command}\n\`\`\``,
      extra: { actions: [{ command }], cost: 0, human: true, timestamp: Date.now() / 1000 },
    };
  }

  formatObservations(
    message: Message,
    outputs: ExecOutput[],
    templateVars: Record<string, unknown>,
  ): Message[] {
    return observationsFor(message, outputs, this.config.observation_template, templateVars);
  }

  templateVars(): Record<string, unknown> {
    return { ...this.config };
  }

  serialize() {
    return {
      model: { ...configVars(this.config), model_name: "human" },
      model_type: "swerun.models.human.HumanModel",
    };
  }
}
