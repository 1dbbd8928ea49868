import type { RunFacts } from "../facts/run-facts.js";
import { durationMs, type ExportStatus, exportStatus } from "../facts/status.js";
import type { VerdictReason } from "../formats/run-json.js";

/** One line of the `summary` export: the harness's keys, then swerun's evaluation verdict. */
export interface SummaryResult {
  id: string;
  input: string;
  output: string;
  toolCalls: string[];
  status: ExportStatus;
  /** The instance's wall time in ms (see `durationMs`); null when the trajectory records no times. */
  duration: number | null;
  /** swerun's addition: the evaluation verdict (null: not graded) and its reason. */
  resolved: boolean | null;
  verdict: VerdictReason;
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

/** The names of the tool calls in order: each command's program, and each tool call that was not valid JSON. */
export function toolCallNames(facts: RunFacts): string[] {
  return facts.turns.flatMap((turn) => [
    ...(turn.invalid_tool_calls ?? []).map((call) => call.name),
    ...turn.tool_calls.map((call) => call.name),
  ]);
}

/** The summary record of one run (its verdict is the facts'). */
export function summaryResult(facts: RunFacts): SummaryResult {
  return {
    id: facts.id,
    input: inputOf(facts),
    output: outputOf(facts),
    toolCalls: toolCallNames(facts),
    status: exportStatus(facts),
    duration: durationMs(facts),
    resolved: facts.verdict.resolved,
    verdict: facts.verdict.reason,
  };
}
