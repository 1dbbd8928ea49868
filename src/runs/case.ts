import { type BehaviorMetrics, behaviorMetrics, patchLines } from "./metrics.js";

/** One instance of a run as `run.json` records it when the instance ends (sniffbench's "case"). */
export interface RunCase {
  exit_status: string;
  submitted: boolean;
  patch_lines: number;
  /** The evaluation verdict; absent until the instance is graded. */
  resolved?: boolean;
  steps: number;
  cost: number;
  /** Seconds from the first to the last recorded message. */
  duration_s: number;
  behaviorMetrics: BehaviorMetrics;
  /** The Docker host the instance ran on, in a batch across several (`--docker-host`). */
  host?: string;
}

const obj = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};

/** The case record of a trajectory (swerun's or mini-swe-agent's; a bare message list records no status). */
export function caseFromTrajectory(trajectory: unknown): RunCase {
  const info = obj(obj(trajectory).info);
  const submission = typeof info.submission === "string" ? info.submission : "";
  const metrics = behaviorMetrics(trajectory);
  return {
    exit_status: typeof info.exit_status === "string" && info.exit_status ? info.exit_status : "unknown",
    submitted: submission.trim() !== "",
    patch_lines: patchLines(submission),
    steps: metrics.steps,
    cost: metrics.costUsd,
    duration_s: metrics.wallTimeSeconds,
    behaviorMetrics: metrics,
  };
}
