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
  /** The Docker hosts of a batch across several (no credentials: addresses only), and how each was last seen. */
  hosts?: Array<{ host: string; workers: number; state: "up" | "down" }>;
}

/** Writes run.json atomically, secrets redacted (the config has its credential keys removed already). */
export function writeRunRecord(path: string, record: RunRecord): void {
  writeFileAtomic(path, [redactedJson(record)]);
}
