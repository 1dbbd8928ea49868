import { closeSync, existsSync, openSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { makeDirsSync, removeMadeDirs } from "./make-dirs.js";

function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EROFS") return "read-only file system";
  if (code === "ENOTDIR" || code === "EEXIST") return "a part of the path is a file";
  if (code === "ENOENT") return "no such folder can be made there";
  return code ?? (error as Error).message;
}

/**
 * Why `dir` cannot be an output folder, or undefined when it can: makes it (when missing), writes and
 * removes a probe file, so a file in the way, a read-only mount or missing permissions show before any
 * paid work starts. Folders are made one level at a time (a path under /proc fails at once).
 */
export function outputDirProblem(dir: string): string | undefined {
  if (existsSync(dir) && !statSync(dir).isDirectory()) return "exists and is not a folder";
  let made: string | undefined;
  try {
    made = makeDirsSync(dir);
  } catch (error) {
    return `cannot create the folder (${reason(error)})`;
  }
  const probe = join(dir, `.swerun-write-test-${process.pid}`);
  try {
    closeSync(openSync(probe, "w"));
    rmSync(probe, { force: true });
  } catch (error) {
    return `cannot write in the folder (${reason(error)})`;
  } finally {
    // The check leaves no trace: folders it made are made again when the run writes its first file.
    if (made) removeMadeDirs(made, dir);
  }
  return undefined;
}
