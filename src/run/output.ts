import { closeSync, openSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { OutputPathError } from "../errors.js";
import { makeDirsSync } from "../util/make-dirs.js";

const reason = (error: unknown) =>
  (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));

/**
 * Checks, before anything runs, that a trajectory can be written at `path`: its folder is created (one
 * level at a time, so a path under /proc fails at once), and a probe file is created and removed there.
 * Throws OutputPathError naming the path and why (a path under a file, an unwritable or read-only folder).
 */
export function checkOutputPath(path: string, label = "trajectory"): string {
  const target = resolve(path);
  const dir = dirname(target);
  try {
    if (statSync(target).isDirectory()) throw new OutputPathError(`${label} ${target}: is a directory`);
  } catch (error) {
    if (error instanceof OutputPathError) throw error;
    if ((error as NodeJS.ErrnoException).code === "ENOTDIR") {
      throw new OutputPathError(`${label} ${target}: a part of the path is a file, not a folder`);
    }
  }
  try {
    makeDirsSync(dir);
  } catch (error) {
    const why = reason(error) === "ENOTDIR" ? "a part of the path is a file, not a folder" : reason(error);
    throw new OutputPathError(`${label} ${target}: cannot create its folder ${dir} (${why})`);
  }
  const probe = join(dir, `.${basename(target)}.${process.pid}.probe`);
  try {
    closeSync(openSync(probe, "wx"));
    rmSync(probe, { force: true });
  } catch (error) {
    throw new OutputPathError(`${label} ${target}: cannot write in ${dir} (${reason(error)})`);
  }
  return target;
}

/** Where a trajectory goes when its own path fails to be written during the run: the system temp folder. */
export function fallbackPath(path: string): string {
  return join(tmpdir(), `swerun-${process.pid}-${basename(path)}`);
}
