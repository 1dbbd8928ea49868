import { constants, copyFileSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { UserError } from "../errors.js";
import { tempPathOf } from "../util/atomic-write.js";
import { fileWriteError } from "../util/file-error.js";
import { processAlive } from "../util/process-alive.js";

/**
 * Takes `<dir>/.swerun.lock` so that only one swerun process writes an output folder, and returns the
 * function that releases it. The lock appears whole or not at all: it is written to a temp file and linked
 * into place (a link fails when a lock is there), so a full disk leaves no lock, only a named error (the
 * temp file goes). A lock left by a process that is gone (on this host), and an empty or unreadable one
 * (no process writes a lock in place), is taken over.
 */
export function lockOutputDir(dir: string): () => void {
  const path = join(dir, ".swerun.lock");
  const temp = tempPathOf(path);
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      temp,
      JSON.stringify({ pid: process.pid, host: hostname(), started: new Date().toISOString() }),
    );
  } catch (error) {
    rmSync(temp, { force: true });
    throw fileWriteError(path, error);
  }
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      if (placeLock(temp, path)) return releaser(path);
      const holder = lockHolder(path);
      if (holder === "gone") continue;
      if (holder === "stale") {
        rmSync(path, { force: true });
        continue;
      }
      throw new UserError(
        `${dir} is being written by another swerun process (pid ${holder.pid} on ${holder.host}); wait for it, or delete ${path} if it is gone`,
      );
    }
    throw new UserError(`${dir}: could not take the output lock ${path}`);
  } catch (error) {
    throw error instanceof UserError ? error : fileWriteError(path, error);
  } finally {
    rmSync(temp, { force: true });
  }
}

/** Puts the whole lock `temp` at `path` unless a lock is there (false then). */
function placeLock(temp: string, path: string): boolean {
  try {
    linkSync(temp, path);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    // A file system without hard links: an exclusive copy (a kill inside it leaves a lock taken as stale).
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") throw error;
  }
  try {
    copyFileSync(temp, path, constants.COPYFILE_EXCL);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    rmSync(path, { force: true });
    throw error;
  }
}

/**
 * Who holds the lock at `path`: a process that may be alive; `stale` when it is gone (on this host) or
 * the file does not say (empty, cut, not JSON); `gone` when the lock itself went meanwhile.
 */
function lockHolder(path: string): { pid: number | string; host: string } | "stale" | "gone" {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return "gone";
    throw error;
  }
  let holder: { pid?: unknown; host?: unknown };
  try {
    holder = JSON.parse(text);
  } catch {
    return "stale";
  }
  if (typeof holder !== "object" || holder === null || typeof holder.pid !== "number") return "stale";
  const host = typeof holder.host === "string" ? holder.host : "?";
  if (host === hostname() && !processAlive(holder.pid)) return "stale";
  return { pid: holder.pid, host };
}

/** Releases the lock once (a folder that no longer lets it go leaves it, taken over as stale later). */
function releaser(path: string): () => void {
  let released = false;
  return () => {
    if (released) return;
    released = true;
    try {
      rmSync(path, { force: true });
    } catch {
      // the next process finds our pid gone and takes the lock over
    }
  };
}
