import { cpSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { UserError } from "../errors.js";

/**
 * A fresh temporary copy of `run.setup_dir` (the demo's project) for a local environment to work in: a run's,
 * or a replay's when no `--cwd` is given. `prefix` names the folder in the temporary directory.
 */
export function copySetupDir(setupDir: string, prefix = "swerun-"): string {
  const source = resolve(setupDir);
  if (!existsSync(source)) throw new UserError(`run.setup_dir: no such directory: ${source}`);
  const workdir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(source, workdir, { recursive: true });
  return workdir;
}

/**
 * The end of a temporary copy of `run.setup_dir` a run or replay worked in: removed (the trajectory holds what
 * the agent did, and its diff), unless `keep` (`--keep-workdir`). Returns what to print after `workdir:`.
 */
export function endWorkdir(workdir: string, keep: boolean): string {
  if (keep) return `${workdir} (kept: --keep-workdir)`;
  rmSync(workdir, { recursive: true, force: true });
  return `${workdir} (a temporary copy, removed; --keep-workdir keeps it)`;
}
