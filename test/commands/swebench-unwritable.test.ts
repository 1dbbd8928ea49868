import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli, startCli, waitFor } from "../helpers/cli.js";
import { writeDataset } from "../helpers/datasets.js";
import { tempDir } from "../helpers/tmp.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));
const LOCAL = ["--environment-class", "local", "-c", "swebench", "-c", "swebench-demo"];

/** As root, the batch runs as nobody: a folder's permissions hold for it (root writes anywhere). */
const USER = process.getuid?.() === 0 ? 65534 : undefined;

describe("swebench with an output folder made read-only mid-batch", () => {
  it("starts no new instance, keeps what finished, names the file and says what to do (exit 1); made writable again, the resume restores preds.json and runs the rest", async () => {
    const dir = tempDir();
    chmodSync(dir, 0o755);
    const go = join(dir, "go");
    const dataset = writeDataset(dir, 3);
    // The second instance's first command waits until the test has made the folder read-only.
    const records = readJson(dataset);
    records[1].swerun_scripted_outputs[0].extra.actions[0].command = `until [ -e ${go} ]; do sleep 0.02; done`;
    writeFileSync(dataset, JSON.stringify(records));
    const out = join(dir, "out");
    const home = join(dir, "home");
    for (const folder of [out, home]) {
      mkdirSync(folder);
      if (USER !== undefined) chownSync(folder, USER, USER);
    }
    const options = { env: { HOME: home, SWERUN_CACHE_DIR: join(home, "cache") }, uid: USER };
    const args = ["swebench", "--subset", dataset, ...LOCAL, "-o", out];
    const run = startCli(args, options);
    const log = () =>
      existsSync(join(out, "swerun.log")) ? readFileSync(join(out, "swerun.log"), "utf8") : "";
    await waitFor(() => log().includes("test__calc-2: start"), 30_000, run.child);
    chmodSync(out, 0o555);
    writeFileSync(go, "");
    const result = await run.done;
    expect(result.code, result.stderr).toBe(1);
    const failure = `swerun: could not write ${join(out, "preds.json")}: permission denied (EACCES). No new instances start`;
    expect(result.stderr).toContain(failure);
    expect(result.stderr).toContain(`make ${out} writable again, then run the command again to resume`);
    expect(result.stderr).not.toMatch(/\.tmp\b/);
    expect(log()).toContain(failure.slice("swerun: ".length));
    for (const id of ["test__calc-1", "test__calc-2"])
      expect(readJson(join(out, id, `${id}.traj.json`)).info.exit_status, id).toBe("Submitted");
    expect(existsSync(join(out, "test__calc-3"))).toBe(false);

    chmodSync(out, 0o755);
    const resumed = await runCli(args, options);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain("preds.json: restored 1 entry from finished trajectories");
    expect(resumed.stderr).toContain("1 instances to run, 2 already finished (skipped)");
    expect(Object.keys(readJson(join(out, "preds.json"))).sort()).toEqual([
      "test__calc-1",
      "test__calc-2",
      "test__calc-3",
    ]);
  });
});
