import { existsSync, readFileSync } from "node:fs";
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

/** Writes run.json, keeping the `eval` verdicts that `swerun eval` (or `--eval`) recorded there. */
export function writeRunRecord(path: string, record: RunRecord): void {
  let verdicts: unknown;
  try {
    verdicts = existsSync(path) ? JSON.parse(readFileSync(path, "utf8")).eval : undefined;
  } catch {
    verdicts = undefined;
  }
  const data = verdicts === undefined ? record : { ...record, eval: verdicts };
  writeFileAtomic(path, [`${JSON.stringify(data, null, 2)}\n`]);
}
