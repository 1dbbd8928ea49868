import type { RunFacts } from "./run-facts.js";

/** The harness's status values. */
export type ExportStatus = "passed" | "failed" | "error" | "timeout";

/**
 * An instance's export status. An evaluation verdict wins when there is one (resolved → passed, else
 * failed). Without one: Submitted → passed; TimeExceeded, or a command that timed out in the last turn
 * of a run that did not submit → timeout; an error's exit status (an exception class name, or no exit
 * status at all) → error; every other end (limits, repeated format errors, interruptions) → failed.
 */
export function exportStatus(facts: RunFacts, resolved: boolean | undefined): ExportStatus {
  if (resolved !== undefined) return resolved ? "passed" : "failed";
  const status = facts.exit_status;
  if (status === "Submitted") return "passed";
  const lastCall = facts.turns.at(-1)?.tool_calls.at(-1);
  if (status === "TimeExceeded" || lastCall?.timed_out) return "timeout";
  if (facts.error_message !== null || status === "") return "error";
  return "failed";
}
