import type { RunFacts, VerdictFacts } from "../facts/run-facts.js";
import type { RunCase } from "../formats/run-json.js";
import { behaviorMetrics, patchLines } from "./metrics.js";

/** Who grades swerun's cases (sniffbench's `gradedBy`): the SWE-bench harness's grading (`swerun eval`, `swebench --eval`). */
export const GRADED_BY = "swebench";

/** The verdict fields of a case: `resolved`, `verdict`, `grade`, `gradedAt`, `gradedBy` (none when not evaluated). */
export function caseVerdict(verdict: VerdictFacts): Partial<RunCase> {
  if (verdict.reason === "not_evaluated") return {};
  return {
    ...(verdict.resolved === null ? {} : { resolved: verdict.resolved }),
    verdict: verdict.reason,
    ...(verdict.resolved === null ? {} : { grade: verdict.resolved ? 10 : 0 }),
    ...(verdict.graded_at ? { gradedAt: verdict.graded_at } : {}),
    gradedBy: GRADED_BY,
  };
}

/** The case record of an instance, from its facts (its verdict included when it has one). */
export function caseFromFacts(facts: RunFacts): RunCase {
  const metrics = behaviorMetrics(facts);
  return {
    answer: facts.submission,
    ...caseVerdict(facts.verdict),
    behaviorMetrics: metrics,
    exit_status: facts.exit_status || "unknown",
    submitted: facts.submitted,
    empty_patch: facts.empty_patch,
    patch_lines: patchLines(facts.submission),
    steps: facts.steps,
    cost: facts.cost ?? 0,
    duration_s: metrics.wallTimeSeconds,
  };
}
