import { exitMessage, Submitted } from "../errors.js";
import type { Action, ExecOutput } from "../messages.js";

export const SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";

/**
 * The key of a Submitted exit message's `extra` that records the command that submitted (it ran, but
 * mini-swe-agent records no output for it): `{command, returncode, duration_s, timestamp}`, the timestamp
 * being when it ended (Unix seconds). mini-swe-agent's readers ignore it.
 */
export const SUBMIT_ACTION_KEY = "submit_action";

/**
 * The one place that decides whether an action submitted: the first line of its output, left-stripped,
 * is exactly the marker and the exit code is 0. The submission is the remaining lines. The exit message
 * records the command that submitted, measured (see `SUBMIT_ACTION_KEY`).
 */
export function checkSubmission(output: ExecOutput, action?: Action): void {
  if (output.returncode !== 0) return;
  const text = output.output.trimStart();
  const newline = text.indexOf("\n");
  const firstLine = newline < 0 ? text : text.slice(0, newline);
  if (firstLine.trim() !== SUBMIT_MARKER) return;
  const submission = newline < 0 ? "" : text.slice(newline + 1);
  const exit = exitMessage("Submitted", submission, submission);
  if (action) {
    const duration = output.extra?.duration_s;
    exit.extra = {
      ...exit.extra,
      [SUBMIT_ACTION_KEY]: {
        command: action.command,
        returncode: output.returncode,
        duration_s: typeof duration === "number" ? duration : null,
        timestamp: Date.now() / 1000,
      },
    };
  }
  throw new Submitted(exit);
}
