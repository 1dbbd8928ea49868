import { createRequire } from "node:module";
import type * as Readline from "node:readline";
import { isatty } from "node:tty";

/** Raised when the user presses Ctrl-C at a prompt. */
export class PromptInterrupted extends Error {}

/**
 * Asks one question on the terminal. Ctrl-C at the prompt rejects with PromptInterrupted.
 * The readline interface lives only for the question, so Ctrl-C between questions reaches the process.
 */
export function ask(question: string, input = process.stdin, output = process.stderr): Promise<string> {
  // Loaded at the first question: most runs never ask one (-y, --exit-immediately), and readline is ~2 ms
  // of a start (bench/lean.ts). require(), not import(): `swerun run`'s script (a vm.Script) has no import().
  const { createInterface } = createRequire(import.meta.url)("node:readline") as typeof Readline;
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input, output, terminal: Boolean((input as { isTTY?: boolean }).isTTY) });
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      rl.close();
      fn();
    };
    rl.on("SIGINT", () => finish(() => reject(new PromptInterrupted("interrupted at the prompt"))));
    rl.on("close", () => finish(() => reject(new PromptInterrupted("input closed"))));
    rl.question(question, (answer) => finish(() => resolve(answer)));
  });
}

/**
 * Whether standard input is a terminal, so a question can be asked. Not `process.stdin.isTTY`: creating
 * process.stdin on a file or pipe loads Node's file streams and fs/promises, ~3 ms of a short run's start.
 */
export function stdinIsTerminal(): boolean {
  return isatty(0);
}
