/**
 * The full-disk side of `npm run chaos -- --full-disk` (bench/chaos.ts): a small tmpfs for a batch's output
 * folder, filled to a few KiB at a random moment of a run, and what a run that met it must have left.
 */
import { execFileSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A tmpfs of `megabytes` at `<dir>/disk` (root only), the batch's folder in it, and a filler beside. */
export function mountSmallDisk(dir: string, megabytes: number) {
  const mount = join(dir, "disk");
  mkdirSync(mount);
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${megabytes}m`, "tmpfs", mount], { stdio: "pipe" });
  const filler = join(mount, "filler");
  return {
    out: join(mount, "out"),
    /** Fills the disk until `leave` bytes are free. */
    fill(leave: number): void {
      const stats = statfsSync(mount);
      const fd = openSync(filler, "a");
      try {
        writeSync(fd, Buffer.alloc(Math.max(0, stats.bavail * stats.bsize - leave)));
      } catch {
        // full already
      } finally {
        closeSync(fd);
      }
    },
    unfill: () => rmSync(filler, { force: true }),
    remove(): void {
      execFileSync("umount", [mount], { stdio: "pipe" });
    },
  };
}

/** Each instance folder's trajectory bytes, for those that hold one. */
export function trajectoryBytes(out: string): Map<string, Buffer> {
  const found = new Map<string, Buffer>();
  if (!existsSync(out)) return found;
  for (const id of readdirSync(out)) {
    const path = join(out, id, `${id}.traj.json`);
    if (existsSync(path)) found.set(id, readFileSync(path));
  }
  return found;
}

/** The exit status a trajectory's bytes record, or undefined when they do not parse. */
export function statusOf(bytes: Buffer): string | undefined {
  try {
    return String(JSON.parse(bytes.toString("utf8")).info?.exit_status ?? "");
  } catch {
    return undefined;
  }
}

/** What a run that met a full disk must not have done, counted (each must stay 0). */
export interface DiskFindings {
  /** A finished trajectory there before the run that is gone, or was replaced by one that is not finished. */
  lost: number;
  /** Trajectories in the folder that do not parse. */
  unparsable: number;
  /** An exit code other than 0 (finished) and 1 (an output failed), or 1 without a line naming the file. */
  unnamed: number;
  /** A raw system error on the console (`Error: ENOSPC`, `ENOSPC: ..., write`). */
  raw: number;
  /** Copies of trajectories the process put in the temp folder (`swerun-<pid>-...`). */
  copies: number;
  /** Temp, partial, journal or lock files left in the folder after the run ended. */
  leftovers: number;
}

const FINISHED = new Set(["Submitted", "LimitsExceeded", "TimeExceeded", "RepeatedFormatError"]);

/** Checks the folder a run that met a full disk left (`before`: the trajectories it had before the run). */
export function diskFindings(
  out: string,
  before: Map<string, Buffer>,
  run: { code: number | null; stderr: string; pid: number },
): DiskFindings {
  const after = trajectoryBytes(out);
  let lost = 0;
  for (const [id, bytes] of before) {
    const now = after.get(id);
    if (!FINISHED.has(statusOf(bytes) ?? "")) continue;
    if (!now || (!now.equals(bytes) && !FINISHED.has(statusOf(now) ?? ""))) lost += 1;
  }
  const named = run.code === 0 || (run.code === 1 && /swerun: could not write \//.test(run.stderr));
  return {
    lost,
    unparsable: [...after.values()].filter((bytes) => statusOf(bytes) === undefined).length,
    unnamed: named ? 0 : 1,
    raw: /Error: E[A-Z]+|E[A-Z]+: [a-z ]+, (write|open|rename)/.test(run.stderr) ? 1 : 0,
    copies: readdirSync(tmpdir()).filter((name) => name.startsWith(`swerun-${run.pid}-`)).length,
    leftovers: existsSync(out)
      ? readdirSync(out, { recursive: true }).filter((name) =>
          /\.tmp$|\.partial$|\.undo$|\.swerun\.lock$/.test(String(name)),
        ).length
      : 0,
  };
}
