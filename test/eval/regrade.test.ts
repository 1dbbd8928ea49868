import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readRunMetadata, writeRunMetadata } from "../../src/eval/run-metadata.js";
import { runCli } from "../helpers/cli.js";
import { EVAL_FIXTURES } from "../helpers/eval-images.js";
import { tempDir } from "../helpers/tmp.js";

/** The harness's logs of the Docker fixtures, and what its re-grade made of them (scripts/gen-eval-fixtures.py --regrade). */
const HARNESS = join(EVAL_FIXTURES, "harness");
const REGRADE = join(EVAL_FIXTURES, "regrade");
const MODEL_DIR = "test__model";
const read = (path: string) => readFileSync(path, "utf8");
/** No daemon answers here: a re-grade that tried to reach Docker would fail. */
const NO_DOCKER = { DOCKER_HOST: "unix:///nonexistent/swerun-regrade.sock" };

/** An output folder holding the harness's logs of run `harness` (test logs, scripts, patches; no reports). */
function harnessLogs(out: string): string {
  const logs = join(out, "logs", "run_evaluation", "harness", MODEL_DIR);
  for (const entry of readdirSync(HARNESS, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    mkdirSync(join(logs, entry.name), { recursive: true });
    for (const name of ["test_output.txt", "run_instance.log", "eval.sh", "patch.diff"])
      if (existsSync(join(HARNESS, entry.name, name)))
        cpSync(join(HARNESS, entry.name, name), join(logs, entry.name, name));
  }
  return logs;
}

describe("swerun eval --regrade: grading again from the logs, as the harness's report step", () => {
  it("writes the harness's report.json for every logged instance and its run report, with no daemon", async () => {
    const dir = tempDir();
    const out = join(dir, "out");
    const logs = harnessLogs(out);
    const dataset = join(dir, "dataset.json");
    cpSync(join(REGRADE, "dataset.json"), dataset);
    // The run recorded its dataset when it graded first; the re-grade reads it from there.
    const runJson = join(out, "logs", "run_evaluation", "harness", "run.json");
    writeFileSync(
      runJson,
      `${JSON.stringify({ dataset, split: "test", task_repo: null, created_at: "2020-01-01T00:00:00+00:00" }, null, 2)}\n`,
    );
    const result = await runCli(
      ["eval", join(EVAL_FIXTURES, "preds.json"), "--run-id", "harness", "-o", out, "--regrade"],
      { env: NO_DOCKER },
    );
    expect(result.stderr).toContain("4 instances to grade");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("resolved: 2/6 (4 graded, 1 empty, 1 errors)");
    for (const id of readdirSync(REGRADE).filter((name) => name.startsWith("swerun-test__"))) {
      // Byte for byte, the timed-out instance included: the harness's re-grade grades every test log.
      expect({ id, report: read(join(logs, id, "report.json")) }).toEqual({
        id,
        report: read(join(REGRADE, id, "report.json")),
      });
    }
    const harnessReport = JSON.parse(read(join(REGRADE, `${MODEL_DIR}.harness.json`)));
    const ourReport = JSON.parse(read(join(out, `${MODEL_DIR}.harness.json`)));
    // The harness lists containers and images even for a re-grade; swerun starts no client for one.
    for (const key of ["unstopped_instances", "unstopped_containers", "unremoved_images"])
      delete harnessReport[key];
    expect(ourReport).toEqual(harnessReport);
    expect(Object.keys(ourReport)).toEqual(Object.keys(harnessReport));

    const metadata = JSON.parse(read(runJson));
    expect(Object.keys(metadata)).toEqual(Object.keys(JSON.parse(read(join(REGRADE, "run.json")))));
    expect(metadata).toMatchObject({ dataset, split: "test", task_repo: null });
    expect(metadata.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
    expect(metadata.created_at).not.toBe("2020-01-01T00:00:00+00:00");
  });

  it("refuses a run that recorded no dataset, and a run with no logs to grade again (one line, exit 2, nothing written)", async () => {
    const dir = tempDir();
    const preds = join(EVAL_FIXTURES, "preds.json");
    const none = await runCli(["eval", preds, "--run-id", "nothing", "-o", dir, "--regrade"], {
      env: NO_DOCKER,
    });
    expect(none.code).toBe(2);
    expect(none.stderr).toBe(
      `swerun: --regrade: evaluation run nothing did not record which dataset it used (no logs/run_evaluation/nothing/run.json in ${dir}); pass --subset\n`,
    );
    const dataset = join(dir, "dataset.json");
    cpSync(join(REGRADE, "dataset.json"), dataset);
    harnessLogs(dir);
    const empty = await runCli(
      ["eval", preds, "--run-id", "nothing", "-o", dir, "--regrade", "--subset", dataset],
      { env: NO_DOCKER },
    );
    expect(empty.code).toBe(2);
    expect(empty.stderr.trim().split("\n").at(-1)).toBe(
      `swerun: --regrade: no test_output.txt of evaluation run nothing under ${join(dir, "logs", "run_evaluation", "nothing")}: nothing to grade again, nothing changed (logs there are of run harness: pass --run-id)`,
    );
    expect(readRunMetadata(dir, "nothing")).toBeUndefined();
    expect(readdirSync(dir).sort()).toEqual(["dataset.json", "logs"]);
    // A run graded from a task repo is graded again from that repo (here gone: said, exit 2).
    writeRunMetadata(dir, "nothing", { dataset, split: "test", task_repo: join(dir, "gone") });
    const gone = await runCli(["eval", preds, "--run-id", "nothing", "-o", dir, "--regrade"], {
      env: NO_DOCKER,
    });
    expect(gone.code).toBe(2);
    expect(gone.stderr).toBe(
      `swerun: --regrade: the task repo ${join(dir, "gone")} that logs/run_evaluation/nothing/run.json records is not a task repo (no tasks/ folder); pass --task-repo\n`,
    );
  });
});

/** A run folder as `swebench --eval` leaves it, its gradings logged under its first name `first`. */
function gradedRunFolder(dir: string): {
  folder: string;
  dataset: string;
  runJson: () => Record<string, unknown>;
} {
  const folder = join(dir, "first");
  mkdirSync(folder);
  const dataset = join(dir, "dataset.json");
  cpSync(join(REGRADE, "dataset.json"), dataset);
  cpSync(join(EVAL_FIXTURES, "preds.json"), join(folder, "preds.json"));
  const eval_ = join(folder, "eval");
  harnessLogs(eval_);
  cpSync(join(eval_, "logs", "run_evaluation", "harness"), join(eval_, "logs", "run_evaluation", "first"), {
    recursive: true,
  });
  rmSync(join(eval_, "logs", "run_evaluation", "harness"), { recursive: true });
  writeRunMetadata(eval_, "first", { dataset, split: "test" });
  const verdicts = { "swerun-test__mathx-gold": { resolved: true, status: "resolved" } };
  const record = {
    run_id: "r",
    subset: dataset,
    split: "test",
    eval: { run_id: "first", resolved: 1, graded: 1, instances: verdicts },
  };
  writeFileSync(join(folder, "run.json"), JSON.stringify(record, null, 2));
  return { folder, dataset, runJson: () => JSON.parse(read(join(dir, "renamed", "run.json"))) };
}

describe("swerun eval --regrade on a renamed run folder", () => {
  it("grades again the logs the run recorded (the eval run id in run.json), not an empty run named after the folder", async () => {
    const dir = tempDir();
    const { folder, runJson } = gradedRunFolder(dir);
    renameSync(folder, join(dir, "renamed"));
    const result = await runCli(["eval", join(dir, "renamed"), "--regrade"], { env: NO_DOCKER });
    expect(result.stderr).toContain("4 instances to grade");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("resolved: 2/6 (4 graded, 1 empty, 1 errors)");
    const record = runJson() as {
      eval: { run_id: string; resolved: number; instances: Record<string, unknown> };
    };
    expect(record.eval.run_id).toBe("first");
    expect(record.eval.resolved).toBe(2);
    expect(Object.keys(record.eval.instances).length).toBeGreaterThanOrEqual(4);
    expect(existsSync(join(dir, "renamed", "eval", "logs", "run_evaluation", "renamed"))).toBe(false);
  });

  it("refuses one whose run.json names no eval run and whose logs are under another name, and changes nothing", async () => {
    const dir = tempDir();
    const { folder, runJson } = gradedRunFolder(dir);
    const record = JSON.parse(read(join(folder, "run.json")));
    delete record.eval;
    writeFileSync(join(folder, "run.json"), JSON.stringify(record, null, 2));
    renameSync(folder, join(dir, "renamed"));
    const before = readdirSync(dir, { recursive: true }).sort();
    const runJsonBefore = runJson();
    const result = await runCli(
      ["eval", join(dir, "renamed"), "--regrade", "--subset", join(dir, "dataset.json")],
      { env: NO_DOCKER },
    );
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n").at(-1)).toMatch(
      /^swerun: --regrade: no test_output\.txt of evaluation run renamed under \S+: nothing to grade again, nothing changed \(logs there are of run first: pass --run-id\)$/,
    );
    expect(readdirSync(dir, { recursive: true }).sort()).toEqual(before);
    expect(runJson()).toEqual(runJsonBefore);
  });
});

describe("the run's metadata file", () => {
  it("is written as the harness writes it: 2-space JSON, its keys in order, task repo kept when none is given", () => {
    const dir = tempDir();
    const path = writeRunMetadata(
      dir,
      "r1",
      { dataset: "SWE-bench/SWE-bench_Lite", split: "dev", task_repo: "/srv/é" },
      new Date("2026-01-02T03:04:05.678Z"),
    );
    expect(read(path)).toBe(
      '{\n  "dataset": "SWE-bench/SWE-bench_Lite",\n  "split": "dev",\n  "task_repo": "/srv/\\u00e9",\n  "created_at": "2026-01-02T03:04:05+00:00"\n}\n',
    );
    writeRunMetadata(dir, "r1", { dataset: "other.json", split: "test" });
    expect(readRunMetadata(dir, "r1")).toMatchObject({ dataset: "other.json", task_repo: "/srv/é" });
  });
});
