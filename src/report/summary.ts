import type { RunFacts } from "./run-facts.js";
import { type ExportStatus, exportStatus } from "./status.js";

/** One line of the `summary` export, with the harness's keys. */
export interface SummaryResult {
  id: string;
  input: string;
  output: string;
  toolCalls: string[];
  status: ExportStatus;
  /** Milliseconds from the first to the last recorded time; null when the trajectory records no times. */
  duration: number | null;
}

/** The task (or, when the file does not record it, the task prompt). */
export function inputOf(facts: RunFacts): string {
  return facts.task ?? facts.prompt ?? "";
}

/** The submission, else the last assistant text. */
export function outputOf(facts: RunFacts): string {
  if (facts.submission) return facts.submission;
  for (let index = facts.turns.length - 1; index >= 0; index--) {
    const content = facts.turns[index]?.content;
    if (content) return content;
  }
  return "";
}

export function durationMs(facts: RunFacts): number | null {
  if (facts.started_at === null || facts.ended_at === null) return null;
  return Math.round((facts.ended_at - facts.started_at) * 1000);
}

/** The summary record of one run; `resolved` is its evaluation verdict, when there is one. */
export function summaryResult(facts: RunFacts, resolved?: boolean): SummaryResult {
  return {
    id: facts.id,
    input: inputOf(facts),
    output: outputOf(facts),
    toolCalls: facts.turns.flatMap((turn) => turn.tool_calls.map((call) => call.name)),
    status: exportStatus(facts, resolved),
    duration: durationMs(facts),
  };
}
