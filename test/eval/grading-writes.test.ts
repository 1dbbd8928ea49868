import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect, it } from "vitest";
import { gradingFailure } from "../../src/eval/grading-errors.js";
import { LOG_FILES } from "../../src/eval/harness-constants.js";
import { stageImageAssets } from "../../src/eval/image-assets.js";
import { InstanceLog } from "../../src/eval/instance-log.js";
import { runMetadataPath, writeRunMetadata } from "../../src/eval/run-metadata.js";
import { FileWriteError } from "../../src/util/file-error.js";
import { describeSmallDisk, mountSmallDisk, type SmallDisk } from "../helpers/small-disk.js";
import { tempDir } from "../helpers/tmp.js";

const ID = "x__y-1";
const ASSET = "img/expected.png";

/** The error `write` throws (the test fails when it throws none). */
function failureOf(write: () => unknown): FileWriteError {
  try {
    write();
  } catch (error) {
    expect(error).toBeInstanceOf(FileWriteError);
    return error as FileWriteError;
  }
  throw new Error("the write did not fail");
}

/** The same for an async write. */
async function asyncFailureOf(write: () => Promise<unknown>): Promise<FileWriteError> {
  const error = await write().then(
    () => new Error("the write did not fail"),
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(FileWriteError);
  return error as FileWriteError;
}

/** Temp files an interrupted or failed atomic write left in `dir`. */
const temps = (dir: string) => readdirSync(dir).filter((name) => name.endsWith(".tmp"));

/** A task repo holding the instance's binary asset, `bytes` long. */
function taskRepo(bytes: number, fill: number): string {
  const repo = tempDir();
  const path = join(repo, "tasks", ID, "test_assets", ASSET);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, Buffer.alloc(bytes, fill));
  return repo;
}

/** Stages the asset from `repo` into `logDir`'s image_assets/. */
const stage = (repo: string, logDir: string) =>
  stageImageAssets({ instanceId: ID, assets: [{ path: ASSET }], logDir, taskRepo: repo, warn: () => {} });

/** A small disk holding a grading's earlier files: its log folder with run_instance.log, the run's run.json, a staged asset. */
async function gradedBefore(disk: SmallDisk) {
  const out = join(disk.dir, "out");
  const logDir = join(out, "logs", ID);
  mkdirSync(logDir, { recursive: true });
  const log = new InstanceLog(join(logDir, LOG_FILES.instanceLog));
  log.info("Grading x__y-1");
  writeRunMetadata(out, "r", { dataset: "d.json", split: "test" });
  const staged = join(logDir, "image_assets", "img__expected.png");
  await stage(taskRepo(6000, 1), logDir);
  const files = [runMetadataPath(out, "r"), staged];
  const before = files.map((file) => readFileSync(file));
  const logged = readFileSync(log.path, "utf8");
  /** run.json and the staged asset as they were; `whole`: run_instance.log too, else its lines at least. */
  const unchanged = (whole: boolean) => {
    expect(files.map((file) => readFileSync(file))).toEqual(before);
    const now = readFileSync(log.path, "utf8");
    if (whole) expect(now).toBe(logged);
    else expect(now.startsWith(logged)).toBe(true);
  };
  return { out, logDir, log, staged, unchanged };
}

describeSmallDisk("grading writes on a full disk and in a read-only folder (a small tmpfs)", () => {
  it("full disk: run_instance.log, run.json and a staged asset fail with one line naming the file; what was written stays, no temp file is left", async () => {
    const disk = mountSmallDisk(1 << 20);
    try {
      const { out, logDir, log, staged, unchanged } = await gradedBefore(disk);
      disk.fill(0);

      // A line longer than a page needs a page the disk does not have: the log keeps its earlier lines.
      const logFailure = failureOf(() => log.info("y".repeat(8192)));
      expect(logFailure.message).toBe(`could not write ${log.path}: no space left on device (ENOSPC)`);
      unchanged(false);

      const metadata = runMetadataPath(out, "r");
      const metadataFailure = failureOf(() =>
        writeRunMetadata(out, "r", { dataset: "e.json", split: "dev" }),
      );
      expect(metadataFailure.message).toBe(`could not write ${metadata}: no space left on device (ENOSPC)`);
      expect(temps(dirname(metadata))).toEqual([]);

      const assetFailure = await asyncFailureOf(() => stage(taskRepo(6000, 2), logDir));
      expect(assetFailure.message).toBe(`could not write ${staged}: no space left on device (ENOSPC)`);
      expect(temps(dirname(staged))).toEqual([]);

      // The grading that hit it ends as swerun's own failure, named; a log that cannot take that line too does not hide it.
      expect(gradingFailure(assetFailure, log, ID, logDir)).toEqual({
        error: `output_unwritable: could not write ${staged}: no space left on device (ENOSPC)`,
        infra_failure: "output_unwritable",
      });
      unchanged(false);
    } finally {
      disk.remove();
    }
  });

  it("read-only folder: a new run_instance.log, run.json and a new log folder's asset folder fail with one line naming them (EROFS); nothing earlier changes", async () => {
    const disk = mountSmallDisk(1 << 20);
    try {
      const { out, log, unchanged } = await gradedBefore(disk);
      disk.readOnly(true);
      try {
        // Opening the log again (a --redo) would empty it: refused, the earlier lines stay.
        expect(failureOf(() => new InstanceLog(log.path)).message).toBe(
          `could not write ${log.path}: read-only file system (EROFS)`,
        );
        expect(failureOf(() => writeRunMetadata(out, "r", { dataset: "e.json", split: "dev" })).message).toBe(
          `could not write ${runMetadataPath(out, "r")}: read-only file system (EROFS)`,
        );
        const newLogDir = join(out, "logs", "x__y-2");
        const staging = join(newLogDir, "image_assets");
        expect((await asyncFailureOf(() => stage(taskRepo(10, 3), newLogDir))).message).toBe(
          `could not write ${staging}: read-only file system (EROFS)`,
        );
        unchanged(true);
      } finally {
        disk.readOnly(false);
      }
    } finally {
      disk.remove();
    }
  });
});
