import type { RunFacts, VerdictFacts, VerdictReason } from "../facts/run-facts.js";
import { type BehaviorMetrics, behaviorMetrics, patchLines } from "./metrics.js";

/** Who grades swerun's cases (sniffbench's `gradedBy`): the SWE-bench harness's grading (`swerun eval`, `swebench --eval`). */
export const GRADED_BY = "swebench";

/**
 * One instance of a run as `run.json` records it when the instance ends: sniffbench's case (`answer`,
 * `grade`, `gradedAt`, `gradedBy`, `behaviorMetrics`) plus swerun's facts of it.
 */
export interface RunCase {
  /** The agent's answer: its submission (the patch). */
  answer: string;
  /** 10 when resolved, 0 when graded and not resolved (sniffbench's 1-10 grade, out of 10); absent until graded. */
  grade?: number;
  /** When the verdict was recorded (ISO 8601). */
  gradedAt?: string;
  /** `swebench`: the SWE-bench harness's grading. */
  gradedBy?: string;
  behaviorMetrics: BehaviorMetrics;
  exit_status: string;
  /** It ended with exit status Submitted (whatever its patch; see `RunFacts.submitted`). */
  submitted: boolean;
  /** Its patch is empty (see `RunFacts.empty_patch`); absent in cases recorded before it existed. */
  empty_patch?: boolean;
  patch_lines: number;
  /** The evaluation verdict; absent until the instance is graded. */
  resolved?: boolean;
  /** Why: resolved, unresolved, empty_patch, patch_failed, error; absent until graded. */
  verdict?: VerdictReason;
  steps: number;
  cost: number;
  /** The instance's wall time, as the batch measured it (see `RunFacts.wall_time_s`), rounded to ms. */
  duration_s: number;
  /** The Docker host the instance ran on, in a batch across several (`--docker-host`). */
  host?: string;
}

/** The keys of a case that grading writes (see `caseVerdict`). */
export const CASE_VERDICT_KEYS = ["resolved", "verdict", "grade", "gradedAt", "gradedBy"] as const;

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
