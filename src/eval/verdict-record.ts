import { existsSync } from "node:fs";
import { verdictOfRecord } from "../facts/folder-verdicts.js";
import {
  CASE_VERDICT_KEYS,
  type RunJsonEval,
  type RunJsonObject,
  type RunJsonVerdict,
  readableRunJson,
  updateRunJson,
} from "../formats/run-json.js";
import { caseVerdict } from "../tracking/case.js";
import type { GradeResult } from "./grade-instance.js";

/** What run.json keeps of a grading's result. */
export function verdictOf(result: GradeResult): RunJsonVerdict {
  return {
    resolved: result.resolved,
    status: result.status,
    ...(result.error ? { error: result.error } : {}),
    ...(result.infra_failure ? { infra_failure: result.infra_failure } : {}),
  };
}

/** Whether a recorded verdict is final (the instance is not graded again): anything but an infra failure. */
export function isFinalVerdict(verdict: RunJsonVerdict | undefined): boolean {
  return verdict !== undefined && !verdict.infra_failure;
}

/**
 * Records verdicts in a run folder's run.json, atomically: under `eval` (merged with the verdicts already
 * there for the same eval run id), and as `resolved` in the instance's case (`cases[id]`, which `swerun runs`
 * reads) when the instance has one; a grading error leaves the case without a verdict. A grading that could
 * not be done (an infra failure: the container, the daemon, swerun's own output) never replaces a final
 * verdict. The rest of the file is kept as it is. A missing run.json is left missing; one that cannot be read
 * is a UserError naming it.
 */
export function recordEvalInRunJson(
  path: string,
  update: { run_id: string; report?: string; verdicts: Record<string, RunJsonVerdict> },
): void {
  if (!existsSync(path)) return;
  updateRunJson(path, (onDisk) => {
    const record = readableRunJson(path, onDisk);
    if (record) withVerdicts(record, update);
    return record;
  });
}

/** `record` with the verdicts of `update` (see recordEvalInRunJson). */
function withVerdicts(
  record: RunJsonObject,
  update: { run_id: string; report?: string; verdicts: Record<string, RunJsonVerdict> },
): void {
  const previous = record.eval as RunJsonEval | undefined;
  const earlier: Record<string, RunJsonVerdict> =
    previous?.run_id === update.run_id ? previous.instances : {};
  const instances: Record<string, RunJsonVerdict> = { ...earlier };
  const verdictsKept: Record<string, RunJsonVerdict> = {};
  for (const [id, verdict] of Object.entries(update.verdicts)) {
    const before = earlier[id];
    // A grading that could not be done never replaces a verdict.
    if (verdict.infra_failure && isFinalVerdict(before)) continue;
    // What an update does not say (the parser, the language) is kept; the rest is the new grading's.
    instances[id] = {
      ...(before?.log_parser ? { log_parser: before.log_parser } : {}),
      ...(before?.language ? { language: before.language } : {}),
      ...verdict,
    };
    verdictsKept[id] = verdict;
  }
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
    for (const [id, verdict] of Object.entries(verdictsKept)) {
      const entry = (cases as Record<string, unknown>)[id];
      if (typeof entry !== "object" || entry === null) continue;
      // The case's verdict fields (sniffbench's grade, gradedAt, gradedBy), from the verdict's facts.
      for (const key of CASE_VERDICT_KEYS) delete (entry as Record<string, unknown>)[key];
      const facts = verdictOfRecord(verdict, evalRecord.updated_at);
      if (facts) Object.assign(entry, caseVerdict(facts));
    }
}
