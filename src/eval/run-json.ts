import { existsSync, readFileSync } from "node:fs";
import { writeFileAtomic } from "../util/atomic-write.js";
import type { GradeStatus } from "./grade-instance.js";

/** One instance's verdict, as run.json's `eval.instances` keeps it. */
export interface RunJsonVerdict {
  resolved: boolean;
  status: GradeStatus;
  error?: string;
}

/** What `swerun eval` adds to a run folder's run.json: its own `eval` key, nothing else touched. */
export interface RunJsonEval {
  run_id: string;
  /** The run report, relative to the run folder. */
  report?: string;
  updated_at: string;
  resolved: number;
  graded: number;
  instances: Record<string, RunJsonVerdict>;
}

/**
 * Records verdicts in a run folder's run.json under `eval` (merged with the verdicts already there for the
 * same eval run id), atomically; the rest of the file is kept as it is. A missing run.json is left missing.
 */
export function recordEvalInRunJson(
  path: string,
  update: { run_id: string; report?: string; verdicts: Record<string, RunJsonVerdict> },
): void {
  if (!existsSync(path)) return;
  const record = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  const previous = record.eval as RunJsonEval | undefined;
  const instances = {
    ...(previous?.run_id === update.run_id ? previous.instances : {}),
    ...update.verdicts,
  };
  const verdicts = Object.values(instances);
  const evalRecord: RunJsonEval = {
    run_id: update.run_id,
    ...((update.report ?? previous?.report) ? { report: update.report ?? previous?.report } : {}),
    updated_at: new Date().toISOString(),
    resolved: verdicts.filter((verdict) => verdict.resolved).length,
    graded: verdicts.filter((verdict) => verdict.status === "resolved" || verdict.status === "unresolved")
      .length,
    instances,
  };
  record.eval = evalRecord;
  writeFileAtomic(path, [`${JSON.stringify(record, null, 2)}\n`]);
}
