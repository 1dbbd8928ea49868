import { existsSync, readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import type { RunCase } from "../runs/case.js";
import type { BehaviorMetrics } from "../runs/metrics.js";
import type { AgentSnapshot, DatasetSelection } from "../runs/snapshot.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { redactedJson } from "../util/secrets.js";

/** run.json: what a batch run was (id, label, config, model) and how it went (counts, cost, times). */
export interface RunRecord {
  run_id: string;
  label: string | null;
  status: "running" | "finished" | "interrupted";
  started_at: string;
  ended_at: string | null;
  swerun_version: string;
  model: string;
  subset: string;
  split: string;
  instances: number;
  exit_statuses: Record<string, number>;
  total_cost: number;
  /** The resolved config, with credentials removed. */
  config: Record<string, unknown>;
  /** What the run was configured with, for `swerun runs compare`. */
  agent: AgentSnapshot;
  /** How the instances were selected. */
  dataset: DatasetSelection;
  /** One entry per instance that has ended, filled as each ends. */
  cases: Record<string, RunCase>;
  /** Behaviour metrics summed over `cases`. */
  totals: BehaviorMetrics;
}

/** A case as JSON keeps it, without its verdict. */
const withoutVerdict = (c: RunCase): unknown => JSON.parse(JSON.stringify({ ...c, resolved: undefined }));

/**
 * Writes run.json atomically, secrets redacted (the config has its credential keys removed already). What
 * grading recorded in the file is kept: its `eval` key, and each case's `resolved` while the case is the
 * one that was graded (an instance run again gets a new case, without the old verdict).
 */
export function writeRunRecord(path: string, record: RunRecord): void {
  let onDisk: { eval?: unknown; cases?: Record<string, RunCase> } = {};
  try {
    if (existsSync(path)) onDisk = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    onDisk = {};
  }
  for (const [id, current] of Object.entries(record.cases)) {
    const graded = onDisk.cases?.[id];
    if (current.resolved !== undefined || typeof graded?.resolved !== "boolean") continue;
    if (isDeepStrictEqual(withoutVerdict(graded), withoutVerdict(current)))
      current.resolved = graded.resolved;
  }
  writeFileAtomic(path, [
    redactedJson(onDisk.eval === undefined ? record : { ...record, eval: onDisk.eval }),
  ]);
}
