import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BatchGrader } from "../../src/batch/grader.js";
import type { EvalInstance } from "../../src/eval/eval-instance.js";
import { instanceLogDir } from "../../src/eval/grade-instance.js";
import { tempDir } from "../helpers/tmp.js";

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

const spec = (id: string): EvalInstance => ({
  instance_id: id,
  image: "swerun-test/none:latest",
  eval_script: "",
  log_parser: "parse_log_pytest",
  language: "py",
  FAIL_TO_PASS: [],
  PASS_TO_PASS: [],
  eval_type: "pass_and_fail",
});

/**
 * A batch folder with run.json, and one instance (`done`) that an earlier run submitted and graded: its
 * prediction in preds.json and its report.json on disk. No Docker daemon: the paths tested need none.
 */
function batchFolder(runId: string) {
  const folder = tempDir();
  writeFileSync(join(folder, "run.json"), JSON.stringify({ run_id: "batch" }));
  const earlier = { model_name_or_path: "m", instance_id: "done", model_patch: "diff --git a/x b/x\n" };
  writeFileSync(join(folder, "preds.json"), JSON.stringify({ done: earlier }));
  const logDir = instanceLogDir(join(folder, "eval"), runId, earlier);
  mkdirSync(logDir, { recursive: true });
  writeFileSync(join(logDir, "report.json"), JSON.stringify({ done: { resolved: true } }));
  return folder;
}

describe("BatchGrader", () => {
  it("records an earlier run's verdicts, an empty submission as empty_patch, a grading it cannot start as an error", async () => {
    const runId = "grader-test";
    const folder = batchFolder(runId);
    const lines: string[] = [];
    const grader = new BatchGrader({
      instances: ["done", "empty", "patched", "never"].map(spec),
      rows: [],
      folder,
      runId,
      modelName: "m",
      workers: 2,
      timeoutSeconds: 10,
      say: (line) => lines.push(line),
    });
    // Opening it: the earlier run's verdict reaches run.json.
    expect(readJson(join(folder, "run.json")).eval.instances.done).toMatchObject({ resolved: true });

    grader.submit("empty", "");
    expect(readJson(join(folder, "run.json")).eval.instances.empty).toEqual({
      resolved: false,
      status: "empty_patch",
    });
    // An instance lost with its host before it ended: nothing to grade, nothing to remove.
    grader.lost("never");
    grader.submit("patched", "diff --git a/y b/y\n");
    const { report, path } = await grader.finish();
    grader.close();

    expect(lines).toEqual(["eval patched: no Docker host known for patched"]);
    expect(report).toMatchObject({
      total_instances: 4,
      resolved_ids: ["done"],
      empty_patch_ids: ["empty"],
      error_ids: ["patched"],
      incomplete_ids: ["never"],
    });
    const run = readJson(join(folder, "run.json"));
    expect(run.eval.report).toBe(join("eval", path.slice(join(folder, "eval").length + 1)));
    expect(Object.keys(run.eval.instances).sort()).toEqual(["done", "empty"]);
  });

  it("grades nothing once stopped: a submission after stop is not begun early", async () => {
    const runId = "grader-stop";
    const folder = batchFolder(runId);
    const lines: string[] = [];
    const grader = new BatchGrader({
      instances: [spec("late")],
      rows: [],
      folder,
      runId,
      modelName: "m",
      workers: 1,
      timeoutSeconds: 10,
      say: (line) => lines.push(line),
    });
    grader.stop();
    grader.submitted("late", "diff --git a/z b/z\n");
    grader.prepare("late");
    const { report } = await grader.finish();
    expect(lines).toEqual([]);
    expect(report.submitted_ids).toEqual(["done"]);
  });
});
