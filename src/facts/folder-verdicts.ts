import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { isPlainObject } from "../config/merge.js";
import { runJsonAt, runJsonPath, type VerdictReason } from "../formats/run-json.js";
import { NOT_EVALUATED, type VerdictFacts } from "./run-facts.js";

/** One SWE-bench harness `report.json` under a run folder's `eval/`: the folder it is in, named after the instance. */
export interface EvalReport {
  id: string;
  dir: string;
  /** The instance's record in the report (`{resolved, tests_status, ...}`). */
  record: Record<string, unknown>;
}

/**
 * The evaluation reports of a run folder: every `report.json` under its `eval/` folder whose parent folder is
 * named after the instance (the SWE-bench harness's `{<id>: {resolved: bool, ...}}`), in path order. A report
 * that cannot be read, or has no boolean `resolved`, is skipped.
 */
export function evalReports(runDir: string): EvalReport[] {
  const evalDir = join(runDir, "eval");
  if (!existsSync(evalDir) || !statSync(evalDir).isDirectory()) return [];
  const dirs = readdirSync(evalDir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name === "report.json")
    .map((entry) => entry.parentPath)
    .sort();
  const reports: EvalReport[] = [];
  for (const dir of dirs) {
    const id = basename(dir);
    try {
      const data: unknown = JSON.parse(readFileSync(join(dir, "report.json"), "utf8"));
      const record = isPlainObject(data) ? data[id] : undefined;
      if (isPlainObject(record) && typeof record.resolved === "boolean") reports.push({ id, dir, record });
    } catch {
      // a report being written or broken: no verdict
    }
  }
  return reports;
}

/** The SWE-bench harness's log line for a patch that did not apply (its run_instance.log, swerun's grading error). */
const PATCH_FAILED = ">>>>> Patch Apply Failed";

type Dict = Record<string, unknown>;
const dict = (value: unknown): Dict => (isPlainObject(value) ? value : {});
const str = (value: unknown): string | null => (typeof value === "string" ? value : null);

/**
 * The verdict run.json's `eval.instances` records for an instance (`{resolved, status, error}`, written by
 * `swerun eval` and `swebench --eval`): status resolved, unresolved, empty_patch or error; an error whose
 * text is the harness's patch-apply failure is `patch_failed` (the instance is then not resolved).
 */
export function verdictOfRecord(entry: unknown, gradedAt: string | null): VerdictFacts | undefined {
  const record = dict(entry);
  const status = str(record.status);
  const error = str(record.error);
  const at = str(record.graded_at) ?? gradedAt;
  if (status === "resolved" || status === "unresolved" || status === "empty_patch")
    return { resolved: status === "resolved", reason: status, error: null, graded_at: at };
  if (status === "error") {
    const failed = error?.startsWith(PATCH_FAILED) ?? false;
    return {
      resolved: failed ? false : null,
      reason: failed ? "patch_failed" : "error",
      error,
      graded_at: at,
    };
  }
  if (typeof record.resolved === "boolean") return verdictOfResolved(record.resolved, at);
  return undefined;
}

/** A bare resolved flag (a harness report.json, an older run.json case). */
export function verdictOfResolved(resolved: boolean, gradedAt: string | null): VerdictFacts {
  const reason: VerdictReason = resolved ? "resolved" : "unresolved";
  return { resolved, reason, error: null, graded_at: gradedAt };
}

/** The verdicts of a run folder, by instance id, and whether the folder was evaluated at all. */
export interface FolderVerdicts {
  byId: Map<string, VerdictFacts>;
  /** run.json has an `eval` record, or the folder holds harness reports: an instance without a verdict and with an empty submission is `empty_patch`. */
  evaluated: boolean;
}

/**
 * Every verdict a run folder records, by instance id. In order of precedence: run.json's `eval.instances`
 * (which says why), then the harness's report.json files under `eval/` (resolved or not), then a run.json
 * case's `resolved` flag (runs recorded before `eval.instances` existed). `record`: the folder's run.json as
 * already read (read from the folder when not given).
 */
export function folderVerdicts(runDir: string, record?: Dict): FolderVerdicts {
  const run = record ?? runJsonAt(runJsonPath(runDir)) ?? {};
  const evalRecord = dict(run.eval);
  const updatedAt = str(evalRecord.updated_at);
  const byId = new Map<string, VerdictFacts>();
  for (const [id, entry] of Object.entries(dict(run.cases))) {
    const resolved = dict(entry).resolved;
    const at = str(dict(entry).gradedAt) ?? updatedAt;
    if (typeof resolved === "boolean") byId.set(id, verdictOfResolved(resolved, at));
  }
  const reports = evalReports(runDir);
  for (const report of reports) {
    let at: string | null = null;
    try {
      at = statSync(join(report.dir, "report.json")).mtime.toISOString();
    } catch {
      // gone since it was read: no time
    }
    byId.set(report.id, verdictOfResolved(report.record.resolved === true, at));
  }
  for (const [id, entry] of Object.entries(dict(evalRecord.instances))) {
    const verdict = verdictOfRecord(entry, str(dict(dict(run.cases)[id]).gradedAt) ?? updatedAt);
    if (verdict) byId.set(id, verdict);
  }
  return { byId, evaluated: Object.keys(evalRecord).length > 0 || reports.length > 0 };
}

/**
 * An instance's verdict in its folder: the recorded one, else `empty_patch` for an instance of an evaluated
 * folder that ended with an empty submission (the harness grades those without running them), else
 * not_evaluated.
 */
export function instanceVerdict(
  verdicts: FolderVerdicts,
  id: string,
  ended: { exit_status: string; submission: string },
): VerdictFacts {
  const recorded = verdicts.byId.get(id);
  if (recorded) return recorded;
  if (verdicts.evaluated && ended.exit_status !== "" && ended.submission.trim() === "")
    return { resolved: false, reason: "empty_patch", error: null, graded_at: null };
  return NOT_EVALUATED;
}
