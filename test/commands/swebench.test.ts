import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { patchProblem } from "../../src/datasets/predictions.js";
import { runCli, startCli, waitFor } from "../helpers/cli.js";
import { writeDataset } from "../helpers/datasets.js";
import { tempDir } from "../helpers/tmp.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

/** The local environment and the scripted model (the records carry their scripts). */
const LOCAL = ["--environment-class", "local", "-c", "swebench", "-c", "swebench-demo"];

/** preds.json as the SWE-bench harness loads it: an object keyed by id, each with the three string fields. */
function expectHarnessPreds(path: string): Record<string, { instance_id: string; model_patch: string }> {
  const preds = readJson(path);
  expect(Array.isArray(preds)).toBe(false);
  for (const [id, entry] of Object.entries(preds as Record<string, Record<string, unknown>>)) {
    expect(Object.keys(entry).sort()).toEqual(["instance_id", "model_name_or_path", "model_patch"]);
    expect(entry.instance_id).toBe(id);
    for (const value of Object.values(entry)) expect(typeof value).toBe("string");
    expect(patchProblem(String(entry.model_patch))).toBeUndefined();
  }
  return preds;
}

describe("swerun swebench (local environment)", () => {
  it("runs the bundled demo with 2 workers and writes every output", async () => {
    const out = join(tempDir(), "demo");
    const result = await runCli([
      "swebench",
      "--subset",
      "demo",
      "--environment-class",
      "local",
      "-w",
      "2",
      "-o",
      out,
      "--label",
      "t1",
    ]);
    expect(result.stderr).toMatch(/\[3\/3\] swerun-demo__\w+-\d: Submitted/);
    expect(result.code).toBe(0);
    const preds = expectHarnessPreds(join(out, "preds.json"));
    expect(Object.keys(preds).sort()).toEqual([
      "swerun-demo__calc-1",
      "swerun-demo__count-3",
      "swerun-demo__greet-2",
    ]);
    expect(preds["swerun-demo__greet-2"]?.model_patch).toMatch(/^\+ {2}echo "Hello, \$1!"$/m);
    const trajectory = readJson(join(out, "swerun-demo__calc-1", "swerun-demo__calc-1.traj.json"));
    expect(trajectory.instance_id).toBe("swerun-demo__calc-1");
    expect(trajectory.info.exit_status).toBe("Submitted");
    // mini-swe-agent's batches run its ProgressTrackingAgent, and their trajectories say so.
    expect(trajectory.info.config.agent_type).toBe(
      "minisweagent.run.benchmarks.utils.common.ProgressTrackingAgent",
    );
    const run = readJson(join(out, "run.json"));
    expect(run).toMatchObject({
      label: "t1",
      status: "finished",
      model: "deterministic/demo",
      exit_statuses: { Submitted: 3 },
      instances: 3,
    });
    expect(typeof run.run_id).toBe("string");
    expect(run.ended_at).not.toBeNull();
    const yamlFile = readdirSync(out).find((name) => name.startsWith("exit_statuses_"));
    expect(
      parseYaml(readFileSync(join(out, yamlFile ?? ""), "utf8")).instances_by_exit_status.Submitted,
    ).toHaveLength(3);
    expect(readFileSync(join(out, "swerun.log"), "utf8")).toMatch(/swerun-demo__count-3: Submitted/);
    expect(existsSync(join(out, ".swerun.lock"))).toBe(false);
  });

  it("resumes a killed run: finished instances are skipped, each ends exactly once in preds.json", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, 4, "sleep 0.4");
    const out = join(dir, "out");
    const first = startCli(["swebench", "--subset", dataset, ...LOCAL, "-w", "1", "-o", out]);
    await waitFor(
      () => existsSync(join(out, "preds.json")) && Object.keys(readJson(join(out, "preds.json"))).length >= 1,
      30_000,
      first.child,
    );
    first.child.kill("SIGKILL");
    await first.done;
    const before = Object.keys(readJson(join(out, "preds.json")));
    expect(before.length).toBeGreaterThanOrEqual(1);
    expect(before.length).toBeLessThan(4);
    const finished = join(out, before[0] ?? "", `${before[0]}.traj.json`);
    const mtime = statSync(finished).mtimeMs;
    const second = await runCli(["swebench", "--subset", dataset, ...LOCAL, "-w", "2", "-o", out]);
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(
      new RegExp(`${4 - before.length} instances to run, ${before.length} already finished`),
    );
    const preds = expectHarnessPreds(join(out, "preds.json"));
    expect(Object.keys(preds).sort()).toEqual([
      "test__calc-1",
      "test__calc-2",
      "test__calc-3",
      "test__calc-4",
    ]);
    expect(statSync(finished).mtimeMs).toBe(mtime);
    const partials = readdirSync(out, { recursive: true }).filter((name) =>
      String(name).endsWith(".partial"),
    );
    expect(partials).toEqual([]);
  });

  it("refuses a second swerun process on the same output folder", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, 2, "sleep 2");
    const out = join(dir, "out");
    const first = startCli(["swebench", "--subset", dataset, ...LOCAL, "-o", out]);
    await waitFor(() => existsSync(join(out, ".swerun.lock")), 20_000, first.child);
    const second = await runCli(["swebench", "--subset", dataset, ...LOCAL, "-o", out]);
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/is being written by another swerun process \(pid \d+/);
    first.child.kill("SIGTERM");
    await first.done;
  });

  it("first Ctrl-C starts nothing new; a second stops running instances as Interrupted, preds.json valid", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, 4, "sleep 30");
    const out = join(dir, "out");
    const run = startCli(["swebench", "--subset", dataset, ...LOCAL, "-w", "2", "-o", out]);
    const log = () =>
      existsSync(join(out, "swerun.log")) ? readFileSync(join(out, "swerun.log"), "utf8") : "";
    await waitFor(() => log().split("start (worker").length >= 3, 20_000, run.child);
    run.child.kill("SIGINT");
    await waitFor(() => log().includes("interrupt: no new instances"), 20_000, run.child);
    run.child.kill("SIGINT");
    const result = await run.done;
    expect(result.code).toBe(130);
    const preds = expectHarnessPreds(join(out, "preds.json"));
    expect(Object.keys(preds).sort()).toEqual(["test__calc-1", "test__calc-2"]);
    for (const id of ["test__calc-1", "test__calc-2"]) {
      expect(readJson(join(out, id, `${id}.traj.json`)).info.exit_status).toBe("Interrupted");
    }
    expect(readJson(join(out, "run.json")).status).toBe("interrupted");
    const again = await runCli(["swebench", "--subset", dataset, ...LOCAL, "-o", out, "--slice", "0:0"]);
    expect(again.code).toBe(0);
  });

  it("gives an instance that fails before the agent starts a trajectory with its error", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, 1);
    const out = join(dir, "out");
    const result = await runCli([
      "swebench",
      "--subset",
      dataset,
      ...LOCAL,
      "-o",
      out,
      "-c",
      "run.env_startup_command=echo setting up {{instance_id}}; exit 3",
    ]);
    expect(result.code).toBe(0);
    const trajectory = readJson(join(out, "test__calc-1", "test__calc-1.traj.json"));
    expect(trajectory.instance_id).toBe("test__calc-1");
    expect(trajectory.info.exit_status).toBe("StartupCommandFailed");
    expect(trajectory.info.config.agent_type).toBe(
      "minisweagent.run.benchmarks.utils.common.ProgressTrackingAgent",
    );
    expect(trajectory.messages.at(-1).extra.traceback).toMatch(
      /env_startup_command exited with 3: setting up test__calc-1/,
    );
    expect(readJson(join(out, "preds.json"))["test__calc-1"].model_patch).toBe("");
  });

  it("names the record of a dataset with a missing field", async () => {
    const dir = tempDir();
    const dataset = join(dir, "bad.jsonl");
    writeFileSync(
      dataset,
      '{"instance_id": "a__b-1", "problem_statement": "x"}\n{"instance_id": "a__b-2"}\n',
    );
    const result = await runCli(["swebench", "--subset", dataset, ...LOCAL, "-o", join(dir, "o")]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bad.jsonl: record 1 \(a__b-2\) has no problem_statement/);
  });
});

describe("swerun preds", () => {
  it("merges run folders (newest trajectory wins), validates patches, writes .json and .jsonl", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, 2);
    const a = join(dir, "a");
    const b = join(dir, "b");
    await runCli(["swebench", "--subset", dataset, ...LOCAL, "-o", a]);
    await runCli([
      "swebench",
      "--subset",
      dataset,
      ...LOCAL,
      "-o",
      b,
      "--instance-ids",
      "test__calc-2",
      "-c",
      "model.model_name=newer",
    ]);
    const out = join(dir, "merged.json");
    const result = await runCli(["preds", a, b, "-o", out, "--dataset", dataset]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/2 instances: 2 submitted, 0 with an empty patch, 0 with an invalid patch/);
    const preds = expectHarnessPreds(out);
    expect(preds["test__calc-2"]).toMatchObject({ model_name_or_path: "newer" });
    expect(preds["test__calc-1"]).toMatchObject({ model_name_or_path: "deterministic/demo" });
    const jsonl = join(dir, "merged.jsonl");
    await runCli(["preds", a, "-o", jsonl]);
    expect(
      readFileSync(jsonl, "utf8")
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).instance_id),
    ).toEqual(["test__calc-1", "test__calc-2"]);
  });

  it("reports invalid patches and ids outside the dataset", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, 1);
    const out = join(dir, "a");
    await runCli(["swebench", "--subset", dataset, ...LOCAL, "-o", out]);
    const path = join(out, "test__calc-1", "test__calc-1.traj.json");
    const trajectory = readJson(path);
    trajectory.info.submission = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n-a\n+b\n";
    writeFileSync(path, JSON.stringify(trajectory));
    const invalid = await runCli(["preds", out]);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(
      /invalid patch test__calc-1 \(.*\): Hunk at line 4 contained invalid line/,
    );
    const other = writeDataset(tempDir(), 1, "true", { instance_id: "other__x-1" });
    const outside = await runCli(["preds", out, "--dataset", other]);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toMatch(/1 instance ids are not in .*: test__calc-1/);
  });
});
