import { constants, copyFileSync, linkSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { tempPathOf } from "./atomic-write.js";
import { processAlive } from "./process-alive.js";

/** How long a process waits for a lock another live process holds before it gives up (ms). */
const WAIT_LIMIT_MS = 30_000;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Runs `work` while holding the lock file `lock`, for read-modify-write updates of a file that several
 * processes may update at once (each holds it for milliseconds). The lock appears whole or not at all (a temp
 * file holding the pid and host, linked into place: a link fails when a lock is there); a lock whose process
 * is gone (on this host), or that does not say who holds it, is taken over. A lock held longer than 30 s by a
 * live process is an error naming it. Synchronous: the wait blocks this thread between polls.
 */
export function withFileLock<T>(lock: string, work: () => T): T {
  const temp = tempPathOf(lock);
  try {
    writeFileSync(temp, JSON.stringify({ pid: process.pid, host: hostname() }));
    const giveUp = Date.now() + WAIT_LIMIT_MS;
    for (let delay = 1; !placed(temp, lock); delay = Math.min(delay * 2, 20)) {
      const holder = holderOf(lock);
      if (holder === "stale") rmSync(lock, { force: true });
      else if (holder !== "gone" && Date.now() > giveUp)
        throw new Error(
          `${lock} is held by another process (pid ${holder.pid} on ${holder.host}); delete it if that process is gone`,
        );
      else if (holder !== "gone") Atomics.wait(pause, 0, 0, delay);
    }
  } finally {
    rmSync(temp, { force: true });
  }
  try {
    return work();
  } finally {
    rmSync(lock, { force: true });
  }
}

/** Puts the whole lock `temp` at `lock` unless a lock is there (false then). */
function placed(temp: string, lock: string): boolean {
  try {
    linkSync(temp, lock);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    // A file system without hard links: an exclusive copy.
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") throw error;
  }
  try {
    copyFileSync(temp, lock, constants.COPYFILE_EXCL);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/** Who holds `lock`: a process that may be alive; `stale` when it is gone or the file does not say; `gone` when the lock went meanwhile. */
function holderOf(lock: string): { pid: number; host: string } | "stale" | "gone" {
  let holder: unknown;
  try {
    holder = JSON.parse(readFileSync(lock, "utf8"));
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "gone" : "stale";
  }
  const { pid, host } = (holder ?? {}) as { pid?: unknown; host?: unknown };
  if (typeof pid !== "number" || typeof host !== "string") return "stale";
  return host === hostname() && !processAlive(pid) ? "stale" : { pid, host };
}
