import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { UserError } from "../errors.js";
import { folderVerdicts } from "./folder-verdicts.js";

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

export { type EvalReport, evalReports } from "./folder-verdicts.js";

/**
 * Evaluation verdicts of a run folder by instance id, resolved or not, as its facts have them (see
 * `folderVerdicts`: run.json's `eval`, the harness's reports, the cases); instances without a verdict are absent.
 */
export function evalVerdicts(runDir: string): Map<string, boolean> {
  const verdicts = new Map<string, boolean>();
  for (const [id, verdict] of folderVerdicts(runDir).byId)
    if (verdict.resolved !== null) verdicts.set(id, verdict.resolved);
  return verdicts;
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
