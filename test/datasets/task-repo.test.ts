import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadTaskRepo } from "../../src/datasets/task-repo.js";
import { tempDir } from "../helpers/tmp.js";

function task(repo: string, id: string, split: string, extra: Record<string, string> = {}): void {
  const dir = join(repo, "tasks", id);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "task.yaml"), `instance_id: ${id}\nsplit: ${split}\nversion: "1.0"\n`);
  writeFileSync(join(dir, "tests.json"), '{"FAIL_TO_PASS": ["a"], "PASS_TO_PASS": []}');
  for (const file of ["gold.patch", "test.patch", "eval.sh", "problem_statement.md"])
    writeFileSync(join(dir, file), extra[file] ?? `${file} of ${id}\r\n`);
}

describe("a SWE-bench task repo as the dataset (--task-repo)", () => {
  it("reads each task's files byte for byte and keeps the split's tasks; a missing split names the others", () => {
    const repo = tempDir();
    task(repo, "b__x-2", "test");
    task(repo, "a__x-1", "test");
    task(repo, "c__x-3", "dev");
    mkdirSync(join(repo, "tasks", "not-a-task"));
    const rows = loadTaskRepo(repo, "test");
    expect(rows.map((row) => row.instance_id)).toEqual(["a__x-1", "b__x-2"]);
    expect(rows[0]).toMatchObject({
      version: "1.0",
      eval_script: "eval.sh of a__x-1\r\n",
      patch: "gold.patch of a__x-1\r\n",
      hints_text: "",
      FAIL_TO_PASS: ["a"],
    });
    expect(() => loadTaskRepo(repo, "deprecated")).toThrow(
      `${repo} has no tasks in split "deprecated". It has: dev test`,
    );
    expect(loadTaskRepo(repo, "test", ["c__x-3"]).map((row) => row.instance_id)).toEqual(["c__x-3"]);
    expect(() => loadTaskRepo(repo, "test", ["zz"])).toThrow(`not in ${join(repo, "tasks")}: zz`);
    expect(() => loadTaskRepo(join(repo, "nope"), "test")).toThrow("not a task repo (no tasks/ folder)");
  });
});
