import type { VerdictReason } from "../formats/run-json.js";
import { addTokens, NO_TOKENS, type RunFacts, type RunTotals } from "./run-facts.js";

const REASONS: VerdictReason[] = [
  "resolved",
  "unresolved",
  "empty_patch",
  "patch_failed",
  "error",
  "not_evaluated",
];

/** The facts of a run: its instances' facts summed (each instance counted once, by `id`: the last wins). */
export function runTotals(instances: Iterable<RunFacts>): RunTotals {
  const byId = new Map<string, RunFacts>();
  for (const facts of instances) byId.set(facts.id, facts);
  const all = [...byId.values()];
  const sum = (pick: (facts: RunFacts) => number | null) =>
    all.reduce((total, facts) => total + (pick(facts) ?? 0), 0);
  const exitStatuses: Record<string, number> = {};
  const verdicts = Object.fromEntries(REASONS.map((reason) => [reason, 0])) as Record<VerdictReason, number>;
  for (const facts of all) {
    if (facts.exit_status) exitStatuses[facts.exit_status] = (exitStatuses[facts.exit_status] ?? 0) + 1;
    verdicts[facts.verdict.reason] += 1;
  }
  return {
    instances: all.length,
    submitted: all.filter((facts) => facts.submitted).length,
    empty_patches: all.filter((facts) => facts.empty_patch).length,
    exit_statuses: exitStatuses,
    verdicts,
    graded: all.filter((facts) => facts.verdict.resolved !== null).length,
    resolved: all.filter((facts) => facts.verdict.resolved === true).length,
    steps: sum((facts) => facts.steps),
    api_calls: sum((facts) => facts.api_calls ?? facts.steps),
    attempts: sum((facts) => facts.attempts),
    cost: sum((facts) => facts.cost),
    tokens: all.reduce((total, facts) => addTokens(total, facts.tokens), NO_TOKENS),
    tool_calls: sum((facts) => facts.tool_calls),
    read_calls: sum((facts) => facts.read_calls),
    failed_tool_calls: sum((facts) => facts.failed_tool_calls),
    format_errors: sum((facts) => facts.format_errors),
    timeouts: sum((facts) => facts.timeouts),
    retries: sum((facts) => facts.retries),
    wall_time_s: sum((facts) => facts.wall_time_s),
  };
}
