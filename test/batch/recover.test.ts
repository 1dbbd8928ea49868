import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { killAt, runCli } from "../helpers/cli.js";
import { writeDataset } from "../helpers/datasets.js";
import { tempDir } from "../helpers/tmp.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

/** The local environment and the scripted model (the records carry their scripts). */
const LOCAL = ["--environment-class", "local", "-c", "swebench", "-c", "swebench-demo"];

const IDS = ["test__calc-1", "test__calc-2"];

describe("a batch starting in a folder that a killed run left", () => {
  it("restores the preds.json entry of an instance whose trajectory was renamed into place just before the kill", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, 2);
    const out = join(dir, "out");
    const args = ["swebench", "--subset", dataset, ...LOCAL, "-w", "1", "-o", out];
    await killAt("trajectory-renamed", args);
    const trajectory = join(out, "test__calc-1", "test__calc-1.traj.json");
    expect(readJson(trajectory).info.exit_status).toBe("Submitted");
    const before = existsSync(join(out, "preds.json")) ? readJson(join(out, "preds.json")) : {};
    expect(before["test__calc-1"]).toBeUndefined();
    const mtime = statSync(trajectory).mtimeMs;

    const resumed = await runCli(args);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(
      "preds.json: restored 1 entry from finished trajectories (the earlier run was stopped before recording them): test__calc-1",
    );
    expect(resumed.stderr).toContain("1 instances to run, 1 already finished");
    expect(readFileSync(join(out, "swerun.log"), "utf8")).toContain("preds.json: restored 1 entry");
    const preds = readJson(join(out, "preds.json"));
    expect(Object.keys(preds)).toEqual(IDS);
    for (const id of IDS) {
      expect(preds[id].model_patch).toBe(readJson(join(out, id, `${id}.traj.json`)).info.submission);
      expect(preds[id].model_patch).toMatch(/^diff --git a\/calc.sh/);
      expect(preds[id].model_name_or_path).toBe("deterministic/demo");
    }
    expect(statSync(trajectory).mtimeMs).toBe(mtime);
  });

  it("removes the temp files of interrupted atomic writes, and not those of live processes", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, 1);
    const out = join(dir, "out");
    const args = ["swebench", "--subset", dataset, ...LOCAL, "-o", out];
    const killed = await killAt("atomic-rename", args);
    const stale = readdirSync(out).filter((name) => name.endsWith(".tmp"));
    expect(stale).toEqual([expect.stringMatching(/^\.run\.json\.\d+\.\d+\.tmp$/)]);
    expect(killed.signal).toBe("SIGKILL");
    mkdirSync(join(out, "test__calc-1"), { recursive: true });
    const live = join(out, "test__calc-1", `.test__calc-1.traj.json.${process.pid}.7.tmp`);
    writeFileSync(live, "being written by a live process");

    const resumed = await runCli(args);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(`Removed 1 temp file(s) of interrupted writes: ${stale[0]}`);
    expect(readdirSync(out).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    expect(existsSync(live)).toBe(true);
  });

  it("removes the partial trajectories and undo journals earlier runs left, also of instances it does not run again, and names them", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, 1);
    const out = join(dir, "out");
    const args = ["swebench", "--subset", dataset, ...LOCAL, "-o", out];
    expect((await runCli(args)).code).toBe(0);
    const trajectory = join(out, "test__calc-1", "test__calc-1.traj.json");
    const finished = readFileSync(trajectory);
    // As a run of it that could not be saved left them (before swerun removed its own).
    writeFileSync(`${trajectory}.partial`, finished.subarray(0, 100));
    writeFileSync(`${trajectory}.partial.undo`, '{"size": 50, "restore": []}\n');

    const resumed = await runCli(args);
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain(
      "Removed 2 partial trajectory file(s) and undo journal(s) of runs that did not end or could not be saved: test__calc-1/test__calc-1.traj.json.partial, test__calc-1/test__calc-1.traj.json.partial.undo",
    );
    expect(resumed.stderr).toContain("0 instances to run, 1 already finished (skipped)");
    expect(readdirSync(join(out, "test__calc-1"))).toEqual(["test__calc-1.traj.json"]);
    expect(readFileSync(trajectory)).toEqual(finished);
  });

  it("refuses a dataset whose instance ids repeat, in one line, before running anything", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, 3);
    const records = readJson(dataset);
    records[2].instance_id = "test__calc-1";
    writeFileSync(dataset, JSON.stringify(records));
    const out = join(dir, "out");
    const result = await runCli(["swebench", "--subset", dataset, ...LOCAL, "-o", out]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n").at(-1)).toMatch(
      /^swerun: \S+dataset\.json: instance_id appears more than once: test__calc-1 \(records 0, 2\); give each instance its own id$/,
    );
    expect(existsSync(out)).toBe(false);
  });
});
