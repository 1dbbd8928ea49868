import { writeFileAtomic } from "../util/atomic-write.js";

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
}

export function writeRunRecord(path: string, record: RunRecord): void {
  writeFileAtomic(path, [`${JSON.stringify(record, null, 2)}\n`]);
}
