import pc from "picocolors";
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

/** Shows each step readably on the console: the model's text, the command, the output (trimmed). */
export function consolePrinter(options: PrinterOptions = {}): AgentListener {
  const write = options.write ?? ((chunk: string) => process.stdout.write(chunk));
  const colors = pc.createColors(options.color ?? false);
  const maxLines = options.maxOutputLines ?? 20;
  const out = (line: string) => write(`${redact(line)}\n`);
  let step = (options.firstStep ?? 1) - 1;
  return (event: AgentEvent) => {
    switch (event.type) {
      case "run_start":
        out(colors.bold(`▶ task: ${trimLines(event.task, 6)}`));
        break;
      case "message": {
        const { message } = event;
        if (message.role === "assistant") {
          step += 1;
          out(colors.bold(colors.magenta(`\n─── step ${step}`)));
          const content = text(message).trim();
          if (content) out(colors.dim(trimLines(content, 12)));
          for (const action of message.extra?.actions ?? []) out(colors.cyan(`$ ${action.command}`));
        } else if (message.role === "user" || message.role === "tool") {
          const extra = message.extra ?? {};
          if ("returncode" in extra) {
            const code = Number(extra.returncode);
            const status = code === 0 ? colors.green(`exit ${code}`) : colors.red(`exit ${code}`);
            const raw = String(extra.raw_output ?? "");
            out(
              `${status}${extra.exception_info ? colors.yellow(` · ${String(extra.exception_info)}`) : ""}`,
            );
            if (raw.trim()) out(trimLines(raw, maxLines));
          } else if (extra.interrupt_type) {
            out(colors.yellow(`! ${trimLines(text(message), 6)}`));
          }
        } else if (message.role === "exit") {
          const status = String(message.extra?.exit_status ?? "");
          out(
            colors.bold(status === "Submitted" ? colors.green(`\n■ ${status}`) : colors.red(`\n■ ${status}`)),
          );
        }
        break;
      }
      case "model_retry":
        out(
          colors.yellow(
            `model call failed (attempt ${event.attempt}): ${event.error}; retrying in ${event.delay_s.toFixed(1)} s`,
          ),
        );
        break;
      case "limit_reached":
        out(colors.yellow(`limit reached: ${event.exit_status}`));
        break;
      case "run_end":
        out(`cost $${event.cost.toFixed(4)} · ${event.api_calls} model calls`);
        break;
      default:
        break;
    }
  };
}
