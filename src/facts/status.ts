import type { RunFacts } from "./run-facts.js";

/** The harness's status values. */
export type ExportStatus = "passed" | "failed" | "error" | "timeout";

/** The run's own time limit ran out, or it ended with an error whose message says it timed out (as the harness tells a timeout from an error). */
function timedOut(facts: RunFacts): boolean {
  if (facts.exit_status === "TimeExceeded") return true;
  return facts.error_message !== null && /timeout|timed out/i.test(facts.error_message);
}

/** A tool call failed: a command that did not succeed, or a tool call whose arguments were not valid JSON. */
export function hasToolErrors(facts: RunFacts): boolean {
  return (
    facts.failed_tool_calls > 0 || facts.turns.some((turn) => (turn.invalid_tool_calls?.length ?? 0) > 0)
  );
}

/**
 * An instance's export status, as the harness decides it: `timeout` when the run ran out of time (see
 * `timedOut`); `error` when it did not complete (it ended with an error, was interrupted, or records no end);
 * otherwise it completed, and it is `failed` when one or more tool calls failed, else `passed`. The status
 * says nothing about whether the task was solved: that is the evaluation verdict (`resolved`, `verdict`).
 */
export function exportStatus(facts: RunFacts): ExportStatus {
  if (timedOut(facts)) return "timeout";
  const status = facts.exit_status;
  if (
    facts.error_message !== null ||
    status === "" ||
    status === "UserInterruption" ||
    status === "Interrupted"
  )
    return "error";
  return hasToolErrors(facts) ? "failed" : "passed";
}

/** The run's wall time in whole milliseconds (the facts' `wall_time_s`), null when the trajectory records no times. */
export function durationMs(facts: RunFacts): number | null {
  return facts.wall_time_s === null ? null : Math.round(facts.wall_time_s * 1000);
}
