import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "vitest";

/** CI sets it: what would be skipped for want of privileges fails instead. */
const REQUIRE_DOCKER = process.env.SWERUN_REQUIRE_DOCKER === "1";

/** A small file system of its own (tmpfs), to fill up: the full-disk tests write their outputs there. */
export interface SmallDisk {
  dir: string;
  /** Fills the disk until `leave` bytes are free (a multiple of 4096: tmpfs counts pages). */
  fill(leave: number): void;
  /** Frees what `fill` took. */
  unfill(): void;
  /** Bytes free now. */
  free(): number;
  /** Mounts it again read-only (`true`: every write fails with EROFS, as in a folder the user may not write) or writable. */
  readOnly(on: boolean): void;
  /** Unmounts it and removes its folder (what was written there goes). */
  remove(): void;
}

/** Mounts a tmpfs of `bytes` at a new temp folder (root, or CAP_SYS_ADMIN). Throws when that is not permitted. */
export function mountSmallDisk(bytes: number): SmallDisk {
  const dir = mkdtempSync(join(tmpdir(), "swerun-small-disk-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${bytes},mode=0755`, "tmpfs", dir], { stdio: "pipe" });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const filler = join(dir, "filler");
  const free = () => {
    const stats = statfsSync(dir);
    return stats.bavail * stats.bsize;
  };
  return {
    dir,
    free,
    fill(leave) {
      const fd = openSync(filler, "a");
      try {
        writeFileSync(fd, Buffer.alloc(Math.max(0, free() - leave)));
      } catch {
        // full already
      } finally {
        closeSync(fd);
      }
    },
    unfill: () => rmSync(filler, { force: true }),
    readOnly: (on) => {
      execFileSync("mount", ["-o", `remount,${on ? "ro" : "rw"}`, dir], { stdio: "pipe" });
    },
    remove() {
      execFileSync("umount", [dir], { stdio: "pipe" });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let probed: string | undefined | null = null;

/** Why a tmpfs cannot be mounted here (not root, no CAP_SYS_ADMIN), or undefined when it can. */
function mountProblem(): string | undefined {
  if (probed !== null) return probed;
  try {
    mountSmallDisk(64 * 1024).remove();
    probed = undefined;
  } catch (error) {
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    probed = stderr || (error instanceof Error ? error.message : String(error));
  }
  return probed;
}

/**
 * `describe` for the full-disk tests: skipped with one line saying why when a tmpfs cannot be mounted,
 * failed instead when SWERUN_REQUIRE_DOCKER=1 (CI runs as root, where it can).
 */
export function describeSmallDisk(name: string, body: () => void): void {
  const problem = mountProblem();
  if (problem === undefined) {
    describe(name, body);
  } else if (REQUIRE_DOCKER) {
    describe(name, () => {
      it("needs to mount a small tmpfs (SWERUN_REQUIRE_DOCKER=1)", () => {
        throw new Error(`SWERUN_REQUIRE_DOCKER=1 but a tmpfs cannot be mounted: ${problem}`);
      });
    });
  } else {
    process.stderr.write(`full-disk tests skipped: a tmpfs cannot be mounted here (${problem})\n`);
    describe.skip(name, body);
  }
}
