import pc from "picocolors";
import { SUBMIT_MARKER } from "../agent/submission.js";
import type { AgentEvent, AgentListener } from "../events.js";
import type { Message } from "../messages.js";
import { redact } from "../util/secrets.js";

export interface PrinterOptions {
  write?: (text: string) => void;
  color?: boolean;
  /** Lines of command output shown per observation (head and tail); the trajectory keeps all of it. */
  maxOutputLines?: number;
  /** Number of the first step shown (a run that takes over after N recorded steps starts at N + 1). */
  firstStep?: number;
}

function trimLines(text: string, max: number): string {
  const lines = text.replace(/\n$/, "").split("\n");
  if (lines.length <= max) return lines.join("\n");
  const half = Math.floor(max / 2);
  return [...lines.slice(0, half), `… ${lines.length - 2 * half} more lines …`, ...lines.slice(-half)].join(
    "\n",
  );
}

function text(message: Message): string {
  return typeof message.content === "string" ? message.content : JSON.stringify(message.content ?? "");
}

/** How the console shows a run: the lines it writes, and where in the current step it is. */
class StepPrinter {
  readonly #out: (line: string) => void;
  readonly #colors: ReturnType<typeof pc.createColors>;
  readonly #maxLines: number;
  #step: number;
  /** Commands of the current step that ran, and observations of it seen so far. */
  #ran = 0;
  #observed = 0;

  constructor(options: PrinterOptions) {
    const write = options.write ?? ((chunk: string) => process.stdout.write(chunk));
    this.#out = (line) => write(`${redact(line)}\n`);
    this.#colors = pc.createColors(options.color ?? false);
    this.#maxLines = options.maxOutputLines ?? 20;
    this.#step = (options.firstStep ?? 1) - 1;
  }

  /** A model call that returned a reply: the next step's header. */
  reply(): void {
    this.#step += 1;
    this.#ran = 0;
    this.#observed = 0;
    this.#out(this.#colors.bold(this.#colors.magenta(`\n─── step ${this.#step}`)));
  }

  /** A command that ran; the one that submitted shows no output (the submission is printed at the end). */
  ran(event: Extract<AgentEvent, { type: "action_end" }>): void {
    this.#ran += 1;
    const submitted = event.returncode === 0 && event.output.trimStart().startsWith(SUBMIT_MARKER);
    const note = submitted ? "submitted" : event.exception_info;
    this.#result(event.returncode, note, event.duration_s, submitted ? "" : event.output);
  }

  message(message: Message): void {
    const colors = this.#colors;
    if (message.role === "assistant") {
      const content = text(message).trim();
      if (content) this.#out(colors.dim(trimLines(content, 12)));
      for (const action of message.extra?.actions ?? []) this.#out(colors.cyan(`$ ${action.command}`));
    } else if (message.role === "user" || message.role === "tool") {
      const extra = message.extra;
      if (extra?.interrupt_type) {
        this.#out(colors.yellow(`! ${trimLines(text(message), 6)}`));
      } else if (extra && "returncode" in extra) {
        // Shown when its command ran (action_end); one that did not run is shown as recorded.
        this.#observed += 1;
        if (this.#observed > this.#ran)
          this.#result(extra.returncode, extra.exception_info, null, extra.raw_output);
      }
    } else if (message.role === "exit") {
      const status = message.extra.exit_status;
      const line = `\n■ ${status}`;
      this.#out(colors.bold(status === "Submitted" ? colors.green(line) : colors.red(line)));
    }
  }

  line(line: string): void {
    this.#out(line);
  }

  get colors() {
    return this.#colors;
  }

  #result(code: number, note: string, duration: number | null, output: string): void {
    const colors = this.#colors;
    const status = code === 0 ? colors.green(`exit ${code}`) : colors.red(`exit ${code}`);
    const time = duration === null ? "" : colors.dim(` · ${duration.toFixed(2)} s`);
    this.#out(`${status}${time}${note ? colors.yellow(` · ${note}`) : ""}`);
    if (output.trim()) this.#out(trimLines(output, this.#maxLines));
  }
}

/**
 * Shows each step readably on the console: its number (replies counted as every output counts steps, a reply
 * that could not be run included), the model's text, each command and how it ended as it ran (exit code,
 * duration, output trimmed), what the model was told. A command the trajectory records as not executed after
 * it ran (the one that submitted) is shown as it ran; the run's figures are printed at its end (`printRunEnd`).
 */
export function consolePrinter(options: PrinterOptions = {}): AgentListener {
  const printer = new StepPrinter(options);
  const { colors } = printer;
  return (event: AgentEvent) => {
    switch (event.type) {
      case "run_start":
        printer.line(colors.bold(`▶ task: ${trimLines(event.task, 6)}`));
        break;
      case "model_call_end":
        if (event.replied) printer.reply();
        break;
      case "action_end":
        printer.ran(event);
        break;
      case "message":
        printer.message(event.message);
        break;
      case "model_retry":
        printer.line(
          colors.yellow(
            `model request failed (attempt ${event.attempt}): ${event.error}; retrying in ${event.delay_s.toFixed(1)} s`,
          ),
        );
        break;
      case "limit_reached":
        printer.line(colors.yellow(`limit reached: ${event.exit_status}`));
        break;
      default:
        break;
    }
  };
}
