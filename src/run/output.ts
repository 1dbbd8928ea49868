import { accessSync, closeSync, constants, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { OutputPathError, UserError } from "../errors.js";
import { removeStaleTemps } from "../util/atomic-write.js";
import { ioReason } from "../util/file-error.js";
import { makeDirsSync, removeMadeDirs } from "../util/make-dirs.js";
import { outputDirProblem } from "../util/output-dir.js";
import { WriteTargetError, writeTargetOf } from "../util/write-target.js";

/** Why a file operation failed, in words. */
export function pathReason(error: unknown): string {
  if (error instanceof WriteTargetError) return error.reason;
  if ((error as NodeJS.ErrnoException).code === "ENOENT") return "ENOENT";
  return ioReason(error);
}

/**
 * Checks, before any work starts, that the single-file output `value` of `flag` can be written, and returns
 * `-` (standard output, when `stream`) or its absolute path. A missing or regular file needs a folder that
 * can be made (one level at a time: a path under /proc fails at once) and written in (a probe file is made
 * and removed, and so are the folders made for it); a symlink to a file is checked at its target; a device
 * or a pipe (or a symlink to one) is written through, so it is taken only when `stream` (an output written
 * once, not a trajectory rewritten after every step). Anything else throws OutputPathError, one line naming
 * the flag and the path (exit 2).
 */
export function checkOutputFile(value: string, flag: string, options: { stream?: boolean } = {}): string {
  const stream = options.stream ?? true;
  const refuse = (why: string, cause?: unknown) => new OutputPathError(`${flag} ${value}: ${why}`, { cause });
  if (value === "-") {
    if (stream) return "-";
    throw refuse("this output is rewritten as the run goes, so it needs a file, not standard output");
  }
  const path = resolve(value);
  let target: { path: string; stream: boolean };
  try {
    target = writeTargetOf(path);
  } catch (error) {
    throw refuse(pathReason(error), error);
  }
  if (target.stream) {
    if (!stream)
      throw refuse("is a device or a pipe; this output is rewritten as the run goes, so it needs a file");
    try {
      accessSync(target.path, constants.W_OK);
    } catch (error) {
      throw refuse(`cannot write to it (${pathReason(error)})`, error);
    }
    return path;
  }
  const dir = dirname(target.path);
  let made: string | undefined;
  try {
    made = makeDirsSync(dir);
  } catch (error) {
    throw refuse(`cannot create its folder ${dir} (${pathReason(error)})`, error);
  }
  const probe = join(dir, `.${basename(target.path)}.${process.pid}.probe`);
  try {
    closeSync(openSync(probe, "wx"));
    rmSync(probe, { force: true });
  } catch (error) {
    throw refuse(`cannot write in ${dir} (${pathReason(error)})`, error);
  } finally {
    if (made) removeMadeDirs(made, dir);
  }
  removeLeftTemps(target.path);
  return path;
}

/**
 * Removes the temp files an earlier swerun left next to `path` when it was killed while writing it
 * (`.<name>.<pid>.<n>.tmp` of a process that is gone), and says so on standard error.
 */
function removeLeftTemps(path: string): void {
  const removed = removeStaleTemps(dirname(path), basename(path));
  if (removed.length === 0) return;
  process.stderr.write(
    `swerun: removed ${removed.map((name) => join(dirname(path), name)).join(", ")}: left by an earlier swerun killed while writing ${path}\n`,
  );
}

/**
 * Checks, before anything runs, that a trajectory can be written at `path` (checkOutputFile: a regular file,
 * never a device, a pipe or standard output, since it is rewritten after every step). Throws
 * OutputPathError naming the path and why (a path under a file, an unwritable or read-only folder).
 */
export function checkOutputPath(path: string, label = "trajectory"): string {
  return checkOutputFile(path, label, { stream: false });
}

/** Where a trajectory goes when its own path fails to be written during the run: the system temp folder. */
export function fallbackPath(path: string): string {
  return join(tmpdir(), `swerun-${process.pid}-${basename(path)}`);
}

/** Refuses an output folder that cannot be written (a file in the way, no permission) before any instance runs. */
export function checkOutputDir(dir: string, flag = "-o"): void {
  const problem = outputDirProblem(dir);
  if (problem) throw new UserError(`${flag} ${dir}: ${problem}`);
}
