import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ID_MAX_BYTES } from "../../src/util/safe-path.js";
import { type CliResult, runCli } from "../helpers/cli.js";
import { writeDataset } from "../helpers/datasets.js";
import { tempDir } from "../helpers/tmp.js";

const LOCAL = ["--environment-class", "local", "-c", "swebench", "-c", "swebench-demo", "-w", "1"];

/** Every file and folder under `dir` with its size and modification time: a change anywhere shows. */
function listing(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => {
      const stat = statSync(join(dir, name));
      return `${name} ${stat.isDirectory() ? "dir" : stat.size} ${stat.mtimeMs}`;
    })
    .sort();
}

/** Exit code 2, one line (after the dataset's "Loaded" line) naming the record and the id's problem. */
function expectRefused(result: CliResult, record: RegExp): void {
  const last = result.stderr.replace(/^Loaded \d+ instances from \S+\n/, "");
  expect(last).toMatch(/^swerun: [^\n]+\n$/);
  expect(last).toMatch(record);
  expect(last).toContain("cannot name a folder or file");
  expect(result.code).toBe(2);
}

/** Ids that are not one safe file name, with what the one-line error says of each. */
const HOSTILE: Array<[string, string]> = [
  ["..", '".." names a folder step'],
  [".", '"." names a folder step'],
  ["../../x", "it holds a /"],
  ["../victim/test__calc-1/test__calc-1", "it holds a /"],
  ["a".repeat(300), "it has 300 bytes, more than 200"],
  ["a\0b", "it holds a NUL character"],
  ["a\nb", "it holds a control character"],
];

describe("a dataset instance_id that is not a safe file name: one line naming the record, exit 2, nothing written", () => {
  it("swerun swebench refuses it before the run, and another run's trajectory next to -o stays as it was", async () => {
    const dir = tempDir();
    const victim = join(dir, "victim", "test__calc-1");
    mkdirSync(victim, { recursive: true });
    writeFileSync(join(victim, "test__calc-1.traj.json"), '{"info": {"exit_status": "Submitted"}}');
    const results = await Promise.all(
      HOSTILE.map(async ([id], index) => {
        const sub = join(dir, `case-${index}`);
        mkdirSync(sub);
        const dataset = writeDataset(sub, 2);
        const records = JSON.parse(readFileSync(dataset, "utf8"));
        records[1].instance_id = id;
        writeFileSync(dataset, JSON.stringify(records));
        return runCli(["swebench", "--subset", dataset, ...LOCAL, "-o", join(sub, "out", "run")]);
      }),
    );
    const before = listing(dir);
    for (const [index, [id, problem]] of HOSTILE.entries()) {
      const result = results[index] as CliResult;
      expectRefused(result, /dataset\.json: record 1: instance_id /);
      expect(result.stderr, id).toContain(problem);
    }
    // Nothing was made: no output folder, nothing next to it, the victim untouched.
    const after = listing(dir);
    expect(after).toEqual(before);
    expect(after.filter((line) => line.includes("out"))).toEqual([]);
    expect(readFileSync(join(victim, "test__calc-1.traj.json"), "utf8")).toContain("Submitted");
  });

  it(`runs an id of ${ID_MAX_BYTES} bytes (every file swerun names after it fits), and refuses one byte more`, async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, 1);
    const records = JSON.parse(readFileSync(dataset, "utf8"));
    const id = `${"é".repeat(ID_MAX_BYTES / 2 - 1)}-1`;
    expect(Buffer.byteLength(id)).toBe(ID_MAX_BYTES);
    records[0].instance_id = id;
    writeFileSync(dataset, JSON.stringify(records));
    const out = join(dir, "out");
    const ran = await runCli(["swebench", "--subset", dataset, ...LOCAL, "-o", out]);
    expect(ran.stderr).not.toContain("Error");
    expect(ran.code).toBe(0);
    expect(JSON.parse(readFileSync(join(out, id, `${id}.traj.json`), "utf8")).info.exit_status).toBe(
      "Submitted",
    );
    records[0].instance_id = `${id}x`;
    writeFileSync(dataset, JSON.stringify(records));
    expectRefused(
      await runCli(["swebench", "--subset", dataset, ...LOCAL, "-o", join(dir, "out2")]),
      /it has 201 bytes, more than 200/,
    );
  });
});

const pred = (id: string, model = "m") => ({
  model_name_or_path: model,
  instance_id: id,
  model_patch: "diff --git a/x b/x\n",
});

describe("swerun eval: a hostile instance_id or model name is refused before any log is written", () => {
  it("refuses an id of the dataset or of the predictions, and a model name that is a folder step", async () => {
    const dir = tempDir();
    const out = join(dir, "a", "b", "out");
    const cases = await Promise.all(
      HOSTILE.map(async ([id], index) => {
        const sub = join(dir, `case-${index}`);
        mkdirSync(sub);
        writeFileSync(join(sub, "ds.json"), JSON.stringify([{ instance_id: id, problem_statement: "p" }]));
        writeFileSync(join(sub, "preds.json"), JSON.stringify([pred(id)]));
        return runCli([
          "eval",
          join(sub, "preds.json"),
          "--subset",
          join(sub, "ds.json"),
          "-o",
          join(sub, "a", "out"),
        ]);
      }),
    );
    for (const [index, [id, problem]] of HOSTILE.entries()) {
      const result = cases[index] as CliResult;
      expectRefused(result, /preds\.json: prediction 0: instance_id /);
      expect(result.stderr, id).toContain(problem);
    }
    // The dataset's ids are checked when it is read, whatever the predictions say.
    writeFileSync(join(dir, "ds.json"), JSON.stringify([{ instance_id: "../x", problem_statement: "p" }]));
    writeFileSync(join(dir, "preds.json"), JSON.stringify([]));
    writeFileSync(join(dir, "one.json"), JSON.stringify([pred("a__a-1")]));
    expectRefused(
      await runCli(["eval", join(dir, "one.json"), "--subset", join(dir, "ds.json"), "-o", out]),
      /ds\.json: record 0: instance_id "\.\.\/x"/,
    );
    for (const model of ["..", ".", "a\0b"]) {
      writeFileSync(join(dir, "model.json"), JSON.stringify([pred("a__a-1", model)]));
      const result = await runCli([
        "eval",
        join(dir, "model.json"),
        "--subset",
        join(dir, "ds.json"),
        "-o",
        out,
      ]);
      expect(result.code, model).toBe(2);
      expect(result.stderr).toMatch(
        /^swerun: \S+model\.json: prediction 0 \(a__a-1\): model_name_or_path \S+ cannot name a folder or file/,
      );
    }
    // Only the inputs are there: no -o folder, no log anywhere.
    const inputs = /^(case-\d+|ds\.json|preds\.json|one\.json|model\.json)[/ ]/;
    expect(listing(dir).filter((line) => !inputs.test(line))).toEqual([]);
  });

  it("refuses a task repo whose task.yaml names a hostile instance_id", async () => {
    const dir = tempDir();
    const task = join(dir, "repo", "tasks", "a__a-1");
    mkdirSync(task, { recursive: true });
    writeFileSync(join(task, "task.yaml"), 'instance_id: "../../../escaped"\nsplit: test\n');
    writeFileSync(join(task, "tests.json"), '{"FAIL_TO_PASS": [], "PASS_TO_PASS": []}');
    for (const file of ["gold.patch", "test.patch", "eval.sh", "problem_statement.md"])
      writeFileSync(join(task, file), "x\n");
    writeFileSync(join(dir, "preds.json"), JSON.stringify([pred("a__a-1")]));
    const result = await runCli([
      "eval",
      join(dir, "preds.json"),
      "--task-repo",
      join(dir, "repo"),
      "-o",
      join(dir, "out"),
    ]);
    expectRefused(result, /tasks\/a__a-1\/task\.yaml: instance_id "\.\.\/\.\.\/\.\.\/escaped"/);
  });
});
