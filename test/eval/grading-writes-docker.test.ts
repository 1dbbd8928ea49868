import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import type Docker from "dockerode";
import { beforeAll, expect, it } from "vitest";
import { pausedAt, runCli, startCli } from "../helpers/cli.js";
import { describeDocker, dockerFixture, swerunContainers } from "../helpers/docker.js";
import { EVAL_FIXTURES, ensureEvalImage } from "../helpers/eval-images.js";
import { describeSmallDisk, mountSmallDisk, type SmallDisk } from "../helpers/small-disk.js";
import { tempDir } from "../helpers/tmp.js";

const MODEL_DIR = "test__model";
const GOLD = "swerun-test__mathx-gold";
const BREAKS = "swerun-test__mathx-breaks";
/** What a grading leaves in its log folder, and the run's own files: they must come through a failed redo as they were. */
const INSTANCE_FILES = ["report.json", "test_output.txt", "patch.diff", "eval.sh"];

await describeDocker("swerun eval: gradings whose outputs cannot be written", () => {
  let docker: Docker;
  let image: string;

  beforeAll(async () => {
    ({ docker } = await dockerFixture());
    image = await ensureEvalImage(docker);
  });

  /**
   * Grades the gold instance into a small disk, then grades it again (`--redo`) with a new instance after it on
   * one worker, stopped as the gold tests are about to run (SWERUN_CHAOS_PAUSE) so that `spoil` can make the
   * disk unwritable there. Returns the second run, and checks that the first run's files came through.
   */
  async function redoSpoiled(disk: SmallDisk, spoil: () => void) {
    const dir = tempDir();
    const runId = `w-${basename(dir)}`;
    const out = join(disk.dir, "out");
    const subset = join(dir, "dataset.json");
    const rows = readFileSync(join(EVAL_FIXTURES, "dataset.json"), "utf8");
    writeFileSync(subset, rows.replaceAll("{image}", image));
    const preds = join(EVAL_FIXTURES, "preds.json");
    const args = ["eval", preds, "--subset", subset, "--run-id", runId, "--network", "none", "-o", out];
    const first = await runCli([...args, "-i", GOLD]);
    expect(first.code, first.stderr).toBe(0);
    const logs = join(out, "logs", "run_evaluation", runId, MODEL_DIR);
    const files = [
      ...INSTANCE_FILES.map((name) => join(logs, GOLD, name)),
      join(out, `${MODEL_DIR}.${runId}.json`),
      join(out, "logs", "run_evaluation", runId, "run.json"),
    ];
    const before = files.map((file) => readFileSync(file));

    const redo = startCli([...args, "-i", `${GOLD},${BREAKS}`, "-w", "1", "--redo"], {
      env: { SWERUN_CHAOS_PAUSE: "grading-tests" },
    });
    await pausedAt(redo, "grading-tests");
    spoil();
    redo.child.kill("SIGCONT");
    const result = await redo.done;
    // The run's own run.json is written again at the start (before the disk was spoiled): only its time changes.
    const after = files.map((file) => readFileSync(file));
    expect(after.slice(0, -1)).toEqual(before.slice(0, -1));
    expect(JSON.parse(String(after.at(-1)))).toMatchObject({ dataset: subset, split: "test" });
    const leftovers = readdirSync(out, { recursive: true })
      .map(String)
      .filter((name) => name.endsWith(".tmp"));
    expect(leftovers).toEqual([]);
    expect(await swerunContainers(docker, runId)).toEqual([]);
    return { result, out, logs, runId, args };
  }

  describeSmallDisk("on a small tmpfs", () => {
    it("the disk full as the tests run: each grading fails with one line naming the file (output_unwritable), the run report too (exit 1); the earlier grading's files stay; freed, the next run grades the rest", async () => {
      const disk = mountSmallDisk(8 << 20);
      try {
        const { result, out, logs, runId, args } = await redoSpoiled(disk, () => disk.fill(0));
        expect(result.code, result.stderr).toBe(1);
        const full = "no space left on device (ENOSPC)";
        expect(result.stderr).toContain(
          `${GOLD}: error: output_unwritable: could not write ${join(logs, GOLD, "test_output.txt")}: ${full} (`,
        );
        expect(result.stderr).toContain(
          `${BREAKS}: error: output_unwritable: could not write ${join(logs, BREAKS, "run_instance.log")}: ${full} (`,
        );
        expect(result.stderr).toMatch(
          new RegExp(
            `\\nswerun: could not write ${out}/${MODEL_DIR}\\.${runId}\\.json: no space left on device \\(ENOSPC\\)\\n$`,
          ),
        );
        expect(result.stderr).not.toMatch(/Error: ENOSPC|FileWriteError/);

        disk.unfill();
        const resumed = await runCli([...args, "-i", `${GOLD},${BREAKS}`]);
        expect(resumed.code, resumed.stderr).toBe(0);
        expect(resumed.stderr).toContain("1 instances to grade, 1 graded before (skipped)");
        expect(resumed.stdout).toContain("resolved: 1/2 (2 graded, 0 empty, 0 errors)");
      } finally {
        disk.remove();
      }
    });

    it("the folder made read-only as the tests run: the test log and a new instance's log folder fail with one line naming them (EROFS), the run report too (exit 1); the earlier grading's files stay", async () => {
      const disk = mountSmallDisk(8 << 20);
      try {
        let readOnly = false;
        try {
          const { result, out, logs, runId } = await redoSpoiled(disk, () => {
            disk.readOnly(true);
            readOnly = true;
          });
          expect(result.code, result.stderr).toBe(1);
          const erofs = "read-only file system (EROFS)";
          expect(result.stderr).toContain(
            `${GOLD}: error: output_unwritable: could not write ${join(logs, GOLD, "test_output.txt")}: ${erofs} (`,
          );
          expect(result.stderr).toContain(
            `${BREAKS}: error: output_unwritable: could not write ${join(logs, BREAKS)}: ${erofs} (`,
          );
          expect(result.stderr).toMatch(
            new RegExp(
              `\\nswerun: could not write ${out}/${MODEL_DIR}\\.${runId}\\.json: read-only file system \\(EROFS\\)\\n$`,
            ),
          );
          expect(result.stderr).not.toMatch(/Error: EROFS|FileWriteError/);
        } finally {
          if (readOnly) disk.readOnly(false);
        }
      } finally {
        disk.remove();
      }
    });
  });
});
