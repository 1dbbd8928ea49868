import type { RunFacts } from "./run-facts.js";

/** The harness's status values (seed 001). */
export type ExportStatus = "passed" | "failed" | "error" | "timeout";

/** swival's report outcomes (seed 000). */
export type Outcome = "success" | "exhausted" | "error";

/** Exit statuses of a run the agent ended on its own: it submitted, or a step, cost or time limit stopped it. */
const COMPLETED = new Set(["Submitted", "LimitsExceeded", "TimeExceeded"]);

/**
 * The run completed: the agent stopped on its own (it submitted, or a step, cost or time limit stopped it).
 * Anything else did not: an error, repeated format errors (the agent could not go on), an interruption, a
 * run that records no end. The one definition both the report's outcome and the exports' status read.
 */
export function completed(facts: Pick<RunFacts, "exit_status" | "error_message">): boolean {
  return facts.error_message === null && COMPLETED.has(facts.exit_status);
}

/**
 * The report's outcome (seed 000): `success` when the agent produced its answer (Submitted), `exhausted`
 * when a step, cost or time limit stopped it, `error` for a run that did not complete (see `completed`).
 */
export function outcomeOf(facts: Pick<RunFacts, "exit_status" | "error_message">): Outcome {
  if (!completed(facts)) return "error";
  return facts.exit_status === "Submitted" ? "success" : "exhausted";
}

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
 * `timedOut`); `error` when it did not complete (see `completed`: an error, repeated format errors, an
 * interruption, no recorded end); otherwise it completed, and it is `failed` when one or more tool calls
 * failed, else `passed`. The status says nothing about whether the task was solved: that is the evaluation
 * verdict (`resolved`, `verdict`).
 */
export function exportStatus(facts: RunFacts): ExportStatus {
  if (timedOut(facts)) return "timeout";
  if (!completed(facts)) return "error";
  return hasToolErrors(facts) ? "failed" : "passed";
}

/** The run's wall time in whole milliseconds (the facts' `wall_time_s`), null when the trajectory records no times. */
export function durationMs(facts: RunFacts): number | null {
  return facts.wall_time_s === null ? null : Math.round(facts.wall_time_s * 1000);
}
