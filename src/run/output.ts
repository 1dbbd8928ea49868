import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { checkOutputFile } from "../util/output-file.js";

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
