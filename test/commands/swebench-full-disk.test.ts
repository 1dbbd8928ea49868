import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { startCli, waitFor } from "../helpers/cli.js";
import { writeDataset } from "../helpers/datasets.js";
import { describeSmallDisk, mountSmallDisk } from "../helpers/small-disk.js";
import { tempDir } from "../helpers/tmp.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));
const LOCAL = ["--environment-class", "local", "-c", "swebench", "-c", "swebench-demo"];
const IDS = ["test__calc-1", "test__calc-2", "test__calc-3"];
const trajectoryOf = (out: string, id: string) => join(out, id, `${id}.traj.json`);

/** Each instance's trajectory bytes (undefined: none). */
const trajectories = (out: string) =>
  Object.fromEntries(
    IDS.map((id) => [
      id,
      existsSync(trajectoryOf(out, id)) ? readFileSync(trajectoryOf(out, id)) : undefined,
    ]),
  );

/** Files a batch must never leave behind: temp files, partial trajectories, undo journals, the lock. */
const leftovers = (out: string) =>
  readdirSync(out, { recursive: true })
    .map(String)
    .filter((name) => /\.tmp$|\.partial$|\.undo$|\.swerun\.lock$/.test(name));

/** The CLI, run to its end; with its pid, to look for files named after it. */
async function batch(args: string[]) {
  const run = startCli(["swebench", ...args]);
  const pid = run.child.pid as number;
  return { ...(await run.done), pid };
}

/** Fallback copies a process left in the temp folder (`swerun-<pid>-...`). */
const tempCopies = (pid: number) => readdirSync(tmpdir()).filter((name) => name.startsWith(`swerun-${pid}-`));

describeSmallDisk("swebench on a full disk (a small tmpfs)", () => {
  it("--redo-existing with 16 KiB free: every finished trajectory stays whole, the failure is named, exit 1; the resume runs nothing again", async () => {
    const disk = mountSmallDisk(1 << 20);
    try {
      const dataset = writeDataset(tempDir(), 3);
      const out = join(disk.dir, "out");
      const args = ["--subset", dataset, ...LOCAL, "-o", out];
      expect((await batch(args)).code).toBe(0);
      const before = trajectories(out);
      const preds = readFileSync(join(out, "preds.json"), "utf8");

      disk.fill(16 * 1024);
      const redo = await batch([...args, "--redo-existing"]);
      expect(redo.code, redo.stderr).toBe(1);
      expect(redo.stderr).toMatch(
        new RegExp(
          `swerun: could not write ${out}/\\S+: no space left on device \\(ENOSPC\\)\\. No new instances start`,
        ),
      );
      expect(redo.stderr).toContain(`free space on the disk of ${out}, then run the command again to resume`);
      expect(redo.stderr).toMatch(
        /not saved: 1 run\(s\) of this batch \(test__calc-1; \$0\.\d+ spent on them\)/,
      );
      expect(redo.stderr).toContain("test__calc-1: not saved (could not write");
      expect(redo.stdout).toContain("exit statuses: Submitted 3");
      expect(trajectories(out)).toEqual(before);
      expect(readFileSync(join(out, "preds.json"), "utf8")).toBe(preds);
      const cases = readJson(join(out, "run.json")).cases;
      for (const id of IDS)
        expect(cases[id], id).toMatchObject({ exit_status: "Submitted", submitted: true });
      expect(leftovers(out)).toEqual([]);
      expect(tempCopies(redo.pid)).toEqual([]);
      const log = readFileSync(join(out, "swerun.log"), "utf8");
      if (!redo.stderr.includes(`could not write ${join(out, "swerun.log")}`))
        expect(log).toContain("No new instances start");

      disk.unfill();
      const resumed = await batch(args);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain("0 instances to run, 3 already finished (skipped)");
      expect(trajectories(out)).toEqual(before);
    } finally {
      disk.remove();
    }
  });

  it("full mid-batch: the instance that cannot save stops at once and leaves nothing; those that finished stay; the resume runs the rest", async () => {
    const disk = mountSmallDisk(1 << 20);
    try {
      const dir = tempDir();
      const go = join(dir, "go");
      const dataset = writeDataset(dir, 3);
      // The second instance's first command waits for the test to fill the disk.
      const records = readJson(dataset);
      records[1].swerun_scripted_outputs[0].extra.actions[0].command = `until [ -e ${go} ]; do sleep 0.02; done`;
      writeFileSync(dataset, JSON.stringify(records));
      const out = join(disk.dir, "out");
      const args = ["swebench", "--subset", dataset, ...LOCAL, "-o", out];
      const run = startCli(args);
      const log = () =>
        existsSync(join(out, "swerun.log")) ? readFileSync(join(out, "swerun.log"), "utf8") : "";
      await waitFor(() => log().includes("test__calc-2: start"), 30_000, run.child);
      const first = readFileSync(trajectoryOf(out, "test__calc-1"));
      disk.fill(0);
      writeFileSync(go, "");
      const result = await run.done;
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toContain(
        `swerun: could not write ${trajectoryOf(out, "test__calc-2")}.partial: no space left on device (ENOSPC). No new instances start`,
      );
      expect(result.stderr).toMatch(
        /test__calc-2: not saved \(.*; cost 0\.\d+, 2 calls\); it runs again when the batch is resumed/,
      );
      expect(result.stdout).toContain("exit statuses: Submitted 1\n");
      expect(trajectories(out)).toEqual({
        "test__calc-1": first,
        "test__calc-2": undefined,
        "test__calc-3": undefined,
      });
      expect(existsSync(join(out, "test__calc-3"))).toBe(false);
      expect(leftovers(out)).toEqual([]);
      expect(tempCopies(run.child.pid as number)).toEqual([]);

      disk.unfill();
      const resumed = await batch(args.slice(1));
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toContain("2 instances to run, 1 already finished (skipped)");
      expect(readFileSync(trajectoryOf(out, "test__calc-1"))).toEqual(first);
      expect(Object.keys(readJson(join(out, "preds.json"))).sort()).toEqual(IDS);
    } finally {
      disk.remove();
    }
  });

  it("full at the start: one line naming the file, exit 1, no lock left; an empty or cut lock does not block the next batch", async () => {
    const disk = mountSmallDisk(256 * 1024);
    try {
      const dataset = writeDataset(tempDir(), 1);
      const out = join(disk.dir, "out");
      const args = ["--subset", dataset, ...LOCAL, "-o", out];
      disk.fill(0);
      const full = await batch(args);
      expect(full.code).toBe(1);
      expect(full.stderr.trim().split("\n").at(-1)).toBe(
        `swerun: could not write ${join(out, ".swerun.lock")}: no space left on device (ENOSPC)`,
      );
      expect(existsSync(out) ? leftovers(out) : []).toEqual([]);

      disk.unfill();
      // As a kill or a full disk left them before the lock was written aside and linked into place.
      for (const lock of ["", '{"pid": 12']) {
        writeFileSync(join(out, ".swerun.lock"), lock);
        const next = await batch(args);
        expect(next.code, next.stderr).toBe(0);
        expect(leftovers(out)).toEqual([]);
      }
    } finally {
      disk.remove();
    }
  });
});
