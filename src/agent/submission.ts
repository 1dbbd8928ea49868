import { exitMessage, Submitted } from "../errors.js";
import type { ExecOutput } from "../messages.js";

export const SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";

/**
 * The one place that decides whether an action submitted: the first line of its output, left-stripped,
 * is exactly the marker and the exit code is 0. The submission is the remaining lines.
 */
export function checkSubmission(output: ExecOutput): void {
  if (output.returncode !== 0) return;
  const text = output.output.trimStart();
  const newline = text.indexOf("\n");
  const firstLine = newline < 0 ? text : text.slice(0, newline);
  if (firstLine.trim() !== SUBMIT_MARKER) return;
  const submission = newline < 0 ? "" : text.slice(newline + 1);
  throw new Submitted(exitMessage("Submitted", submission, submission));
}
