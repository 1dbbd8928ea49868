import pc from "picocolors";
import type { Interaction } from "../agent/interaction.js";
import { exitMessage, UserInterruption } from "../errors.js";
import type { Action } from "../messages.js";
import { ask, PromptInterrupted } from "./prompt.js";

export type Mode = "yolo" | "confirm" | "human";

/**
 * The terminal side of confirm mode and of Ctrl-C. In confirm mode each command is shown: Enter runs it,
 * typed text rejects it and goes to the model as the reason; `/y` switches to yolo for the rest of the run.
 */
export class TerminalInteraction implements Interaction {
  mode: Mode;
  readonly #whitelist: RegExp[];
  readonly #ask: (question: string) => Promise<string>;
  readonly #onInterruptHandled: () => void;

  constructor(
    mode: Mode,
    whitelist: string[] = [],
    asker: (question: string) => Promise<string> = ask,
    onInterruptHandled: () => void = () => {},
  ) {
    this.mode = mode;
    this.#whitelist = whitelist.map((pattern) => new RegExp(pattern));
    this.#ask = asker;
    this.#onInterruptHandled = onInterruptHandled;
  }

  async confirmActions(actions: Action[]): Promise<string | null> {
    if (this.mode !== "confirm") return null;
    if (actions.every((action) => this.#whitelist.some((regex) => regex.test(action.command)))) return null;
    const shown = actions.map((action) => pc.cyan(`$ ${action.command}`)).join("\n");
    const answer = await this.#question(
      `${shown}\n${pc.bold("Run?")} Enter runs it, text rejects it (sent to the model), /y runs everything from now on: `,
    );
    if (answer.trim() === "/y") {
      this.mode = "yolo";
      return null;
    }
    return answer.trim() === "" ? null : answer.trim();
  }

  async onInterrupt(): Promise<string> {
    const answer = await this.#question(
      `\n${pc.yellow("Interrupted.")} Enter continues, text goes to the model, /y /c switch to yolo/confirm, /q quits (Ctrl-C quits too): `,
    );
    this.#onInterruptHandled();
    const trimmed = answer.trim();
    if (trimmed === "/q") throw new UserInterruption(exitMessage("UserInterruption"));
    if (trimmed === "/y" || trimmed === "/c") {
      this.mode = trimmed === "/y" ? "yolo" : "confirm";
      return "";
    }
    return trimmed;
  }

  async confirmExit(): Promise<string | null> {
    if (this.mode !== "confirm") return null;
    const answer = await this.#question(
      `${pc.bold("The agent wants to finish.")} Enter accepts; text goes back to the model and the run goes on: `,
    );
    return answer.trim() === "" ? null : answer.trim();
  }

  async #question(question: string): Promise<string> {
    try {
      return await this.#ask(question);
    } catch (error) {
      if (error instanceof PromptInterrupted) throw new UserInterruption(exitMessage("UserInterruption"));
      throw error;
    }
  }
}
