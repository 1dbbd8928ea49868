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

/**
 * Shows each step readably on the console: its number (replies counted as every output counts steps, a reply
 * that could not be run included), the model's text, each command and how it ended as it ran (exit code,
 * duration, output trimmed), what the model was told. A command the trajectory records as not executed after
 * it ran (the one that submitted) is shown as it ran; the run's figures are printed at its end (`printRunEnd`).
 */
export function consolePrinter(options: PrinterOptions = {}): AgentListener {
  const write = options.write ?? ((chunk: string) => process.stdout.write(chunk));
  const colors = pc.createColors(options.color ?? false);
  const maxLines = options.maxOutputLines ?? 20;
  const out = (line: string) => write(`${redact(line)}\n`);
  let step = (options.firstStep ?? 1) - 1;
  /** Commands of the current step that ran, and observations of it seen so far. */
  let ran = 0;
  let observed = 0;
  const result = (code: number, exceptionInfo: string, duration: number | null, output: string) => {
    const status = code === 0 ? colors.green(`exit ${code}`) : colors.red(`exit ${code}`);
    const time = duration === null ? "" : colors.dim(` · ${duration.toFixed(2)} s`);
    out(`${status}${time}${exceptionInfo ? colors.yellow(` · ${exceptionInfo}`) : ""}`);
    if (output.trim()) out(trimLines(output, maxLines));
  };
  return (event: AgentEvent) => {
    switch (event.type) {
      case "run_start":
        out(colors.bold(`▶ task: ${trimLines(event.task, 6)}`));
        break;
      case "model_call_end":
        if (!event.replied) break;
        step += 1;
        ran = 0;
        observed = 0;
        out(colors.bold(colors.magenta(`\n─── step ${step}`)));
        break;
      case "action_end": {
        ran += 1;
        // The command that submitted: its output is the submission, printed once when the run ends.
        const submitted = event.returncode === 0 && event.output.trimStart().startsWith(SUBMIT_MARKER);
        result(
          event.returncode,
          submitted ? "submitted" : event.exception_info,
          event.duration_s,
          submitted ? "" : event.output,
        );
        break;
      }
      case "message": {
        const { message } = event;
        if (message.role === "assistant") {
          const content = text(message).trim();
          if (content) out(colors.dim(trimLines(content, 12)));
          for (const action of message.extra?.actions ?? []) out(colors.cyan(`$ ${action.command}`));
        } else if (message.role === "user" || message.role === "tool") {
          const extra = message.extra ?? {};
          if ("returncode" in extra) {
            // Shown when its command ran (action_end); one that did not run is shown as recorded.
            observed += 1;
            if (observed > ran)
              result(
                Number(extra.returncode),
                String(extra.exception_info ?? ""),
                null,
                String(extra.raw_output ?? ""),
              );
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
            `model request failed (attempt ${event.attempt}): ${event.error}; retrying in ${event.delay_s.toFixed(1)} s`,
          ),
        );
        break;
      case "limit_reached":
        out(colors.yellow(`limit reached: ${event.exit_status}`));
        break;
      default:
        break;
    }
  };
}
