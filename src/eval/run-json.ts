import { existsSync, readFileSync } from "node:fs";
import { verdictOfRecord } from "../report/verdict.js";
import { CASE_VERDICT_KEYS, caseVerdict } from "../runs/case.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { redactedJson } from "../util/secrets.js";
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
 * Records verdicts in a run folder's run.json, atomically: under `eval` (merged with the verdicts already
 * there for the same eval run id), and as `resolved` in the instance's case (`cases[id]`, which `swerun runs`
 * reads) when the instance has one; a grading error leaves the case without a verdict. The rest of the file
 * is kept as it is. A missing run.json is left missing.
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
  const cases = record.cases;
  if (typeof cases === "object" && cases !== null)
    for (const [id, verdict] of Object.entries(update.verdicts)) {
      const entry = (cases as Record<string, unknown>)[id];
      if (typeof entry !== "object" || entry === null) continue;
      // The case's verdict fields (sniffbench's grade, gradedAt, gradedBy), from the verdict's facts.
      for (const key of CASE_VERDICT_KEYS) delete (entry as Record<string, unknown>)[key];
      const facts = verdictOfRecord(verdict, evalRecord.updated_at);
      if (facts) Object.assign(entry, caseVerdict(facts));
    }
  writeFileAtomic(path, [redactedJson(record)]);
}
