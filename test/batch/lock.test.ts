import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { lockOutputDir } from "../../src/batch/lock.js";
import { UserError } from "../../src/errors.js";
import { FileWriteError } from "../../src/util/file-error.js";
import { describeSmallDisk, mountSmallDisk } from "../helpers/small-disk.js";
import { tempDir } from "../helpers/tmp.js";

/** The pid of a process that has exited (and been reaped). */
function deadPid(): number {
  return spawnSync(process.execPath, ["-e", ""]).pid as number;
}

describe("the output lock", () => {
  it("appears whole, is refused to a second taker while its process lives, and goes when released", () => {
    const dir = tempDir();
    const release = lockOutputDir(dir);
    const lock = JSON.parse(readFileSync(join(dir, ".swerun.lock"), "utf8"));
    expect(lock).toMatchObject({ pid: process.pid, host: hostname() });
    expect(() => lockOutputDir(dir)).toThrow(UserError);
    expect(() => lockOutputDir(dir)).toThrow(
      `is being written by another swerun process (pid ${process.pid}`,
    );
    release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("takes over a lock whose process is gone, and an empty, cut or foreign-shaped one", () => {
    for (const text of [
      JSON.stringify({ pid: deadPid(), host: hostname() }),
      "",
      '{"pid": 4',
      "[]",
      '{"host": "x"}',
    ]) {
      const dir = tempDir();
      writeFileSync(join(dir, ".swerun.lock"), text);
      const release = lockOutputDir(dir);
      expect(JSON.parse(readFileSync(join(dir, ".swerun.lock"), "utf8")).pid, text).toBe(process.pid);
      release();
    }
  });

  it("leaves a lock of another host alone (its process cannot be checked)", () => {
    const dir = tempDir();
    writeFileSync(join(dir, ".swerun.lock"), JSON.stringify({ pid: deadPid(), host: "elsewhere" }));
    expect(() => lockOutputDir(dir)).toThrow(/another swerun process \(pid \d+ on elsewhere\)/);
  });
});

describeSmallDisk("the output lock on a full disk", () => {
  it("fails naming the lock, and leaves neither a lock nor a temp file", () => {
    const disk = mountSmallDisk(64 * 1024);
    try {
      disk.fill(0);
      let error: unknown;
      try {
        lockOutputDir(disk.dir);
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(FileWriteError);
      expect((error as Error).message).toBe(
        `could not write ${join(disk.dir, ".swerun.lock")}: no space left on device (ENOSPC)`,
      );
      expect(existsSync(join(disk.dir, ".swerun.lock"))).toBe(false);
      expect(readdirSync(disk.dir)).toEqual(["filler"]);
    } finally {
      disk.remove();
    }
  });
});
