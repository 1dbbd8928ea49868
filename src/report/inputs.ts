import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import { isPlainObject } from "../config/merge.js";
import { UserError } from "../errors.js";

/** One trajectory to report on, with the evaluation verdict of its run folder when there is one. */
export interface TrajectoryInput {
  path: string;
  /** Where evaluation verdicts for it are looked up (its run folder). */
  verdicts: Map<string, boolean>;
}

const isTrajectory = (name: string) => name.endsWith(".traj.json");

/** `.traj.json` files under `dir`, sorted, leaving out the `eval/` folder and dot-folders. */
function trajectoriesUnder(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !isTrajectory(entry.name)) continue;
    const relative = join(entry.parentPath, entry.name).slice(dir.length + 1);
    if (relative.split(sep).some((part) => part.startsWith(".") || part === "eval")) continue;
    files.push(join(entry.parentPath, entry.name));
  }
  return files.sort();
}

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

/** Evaluation verdicts of a run folder by instance id (see `evalReports`; the last report of an id wins). */
export function evalVerdicts(runDir: string): Map<string, boolean> {
  return new Map(evalReports(runDir).map((report) => [report.id, report.record.resolved === true]));
}

/**
 * The folder whose `eval/` holds the verdicts of a trajectory file: a batch keeps `<run>/<id>/<id>.traj.json`;
 * a single run may keep eval/ next to the file.
 */
export function evalRunDir(trajectoryPath: string): string {
  const run = dirname(dirname(trajectoryPath));
  return existsSync(join(run, "eval")) ? run : dirname(trajectoryPath);
}

/**
 * The trajectories named by run folders and files, one at a time (a folder's list of names is read up
 * front, its trajectories only when asked for). A missing path is a UserError.
 */
export function* trajectoryInputs(paths: string[]): Generator<TrajectoryInput> {
  if (paths.length === 0) throw new UserError("give one or more run folders or .traj.json files");
  for (const given of paths) {
    const path = resolve(given);
    if (!existsSync(path)) throw new UserError(`${given}: no such file or folder`);
    if (statSync(path).isDirectory()) {
      const verdicts = evalVerdicts(path);
      const files = trajectoriesUnder(path);
      if (files.length === 0) throw new UserError(`${given}: no .traj.json files in this folder`);
      for (const file of files) yield { path: file, verdicts };
    } else {
      yield { path, verdicts: evalVerdicts(evalRunDir(path)) };
    }
  }
}
