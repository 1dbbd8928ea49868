import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AtomicFileStream } from "../../src/util/atomic-stream.js";
import {
  removeStaleTemps,
  writeFileAtomic,
  writeFileAtomicAsync,
  writeFileAtomicWith,
} from "../../src/util/atomic-write.js";
import { FileWriteError } from "../../src/util/file-error.js";
import { describeSmallDisk, mountSmallDisk } from "../helpers/small-disk.js";
import { tempDir } from "../helpers/tmp.js";

describeSmallDisk("atomic writes on a full disk (a small tmpfs)", () => {
  it("each way of writing leaves the old file whole, no temp file, and throws an error naming the file", async () => {
    const disk = mountSmallDisk(64 * 1024);
    try {
      const path = join(disk.dir, "out.json");
      writeFileSync(path, "old\n");
      disk.fill(0);
      const big = Buffer.alloc(100_000, "x");
      const ways: Array<[string, () => unknown]> = [
        ["writeFileAtomic", () => writeFileAtomic(path, [big])],
        ["writeFileAtomicWith", () => writeFileAtomicWith(path, (fd) => writeFileSync(fd, big))],
        ["writeFileAtomicAsync", () => writeFileAtomicAsync(path, [big])],
        [
          "AtomicFileStream",
          () => {
            const stream = new AtomicFileStream(path);
            try {
              stream.writeBytes(big);
              stream.commit();
            } finally {
              stream.abort();
            }
          },
        ],
      ];
      for (const [name, write] of ways) {
        let error: unknown;
        try {
          await write();
        } catch (thrown) {
          error = thrown;
        }
        expect(error, name).toBeInstanceOf(FileWriteError);
        expect((error as Error).message, name).toBe(
          `could not write ${path}: no space left on device (ENOSPC)`,
        );
        expect(readFileSync(path, "utf8"), name).toBe("old\n");
        expect(readdirSync(disk.dir).sort(), name).toEqual(["filler", "out.json"]);
      }
    } finally {
      disk.remove();
    }
  });
});

describe("removeStaleTemps", () => {
  it("removes the temp files of processes that are gone (only those of one file, when asked), not of live ones", () => {
    const dir = tempDir();
    const dead = spawnSync(process.execPath, ["-e", ""]).pid as number;
    const names = [
      `.a.json.${dead}.1.tmp`,
      `.b.json.${dead}.3.tmp`,
      `.a.json.${process.pid}.2.tmp`,
      `.a.json.${process.ppid}.2.tmp`,
      "a.json",
    ];
    for (const name of names) writeFileSync(join(dir, name), "");
    expect(removeStaleTemps(dir, "a.json")).toEqual([`.a.json.${dead}.1.tmp`]);
    expect(removeStaleTemps(dir)).toEqual([`.b.json.${dead}.3.tmp`]);
    expect(readdirSync(dir).sort()).toEqual(names.slice(2).sort());
  });
});
