import { readlinkSync, rmSync, symlinkSync } from "node:fs";
import { hostname } from "node:os";
import { processAlive } from "./process-alive.js";

/** How long a process waits for a lock another live process holds before it gives up (ms). */
const WAIT_LIMIT_MS = 30_000;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Runs `work` while holding the lock `lock`, for read-modify-write updates of a file that several processes may
 * update at once (each holds it for milliseconds). The lock is a symbolic link whose target names its holder
 * (`<pid>@<host>`): made in one step or not at all (it fails when a lock is there), and it takes no data block,
 * so a full disk that still has room for the update itself does not refuse the lock. A lock whose process is
 * gone (on this host), or that does not say who holds it (a regular file), is taken over. A lock held longer
 * than 30 s by a live process is an error naming it. On a file system without symbolic links the update runs
 * unlocked. Synchronous: the wait blocks this thread between polls.
 */
export function withFileLock<T>(lock: string, work: () => T): T {
  const holder = `${process.pid}@${hostname()}`;
  const giveUp = Date.now() + WAIT_LIMIT_MS;
  for (let delay = 1; ; delay = Math.min(delay * 2, 20)) {
    const outcome = place(holder, lock);
    if (outcome === "unsupported") return work();
    if (outcome === "placed") break;
    const found = holderOf(lock);
    if (found === "stale") rmSync(lock, { force: true });
    else if (found !== "gone" && Date.now() > giveUp)
      throw new Error(
        `${lock} is held by another process (pid ${found.pid} on ${found.host}); delete it if that process is gone`,
      );
    else if (found !== "gone") Atomics.wait(pause, 0, 0, delay);
  }
  try {
    return work();
  } finally {
    rmSync(lock, { force: true });
  }
}

/** Makes the lock unless one is there (`held`), or says the file system has no symbolic links. */
function place(holder: string, lock: string): "placed" | "held" | "unsupported" {
  try {
    symlinkSync(holder, lock);
    return "placed";
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return "held";
    if (code === "EPERM" || code === "ENOTSUP" || code === "EOPNOTSUPP") return "unsupported";
    throw error;
  }
}

/** Who holds `lock`: a process that may be alive; `stale` when it is gone or the lock does not say; `gone` when the lock went meanwhile. */
function holderOf(lock: string): { pid: number; host: string } | "stale" | "gone" {
  let target: string;
  try {
    target = readlinkSync(lock);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ENOENT" ? "gone" : "stale";
  }
  const match = /^(\d+)@(.+)$/.exec(target);
  if (!match) return "stale";
  const pid = Number(match[1]);
  const host = match[2] as string;
  return host === hostname() && !processAlive(pid) ? "stale" : { pid, host };
}
