import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { recordEvalInRunJson } from "../../src/eval/verdict-record.js";
import { type RunCase, type RunRecord, writeRunRecord } from "../../src/formats/run-json.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/tmp.js";

const pred = (id: string, patch = "diff --git a/x b/x\n") => ({
  model_name_or_path: "m",
  instance_id: id,
  model_patch: patch,
});

describe("swerun eval: bad input is one line and exit code 2, before any container", () => {
  it("names the dataset and the missing grading columns", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "ds.json"),
      JSON.stringify([{ instance_id: "a__b-1", problem_statement: "p", FAIL_TO_PASS: "[]" }]),
    );
    writeFileSync(join(dir, "preds.json"), JSON.stringify({ "a__b-1": pred("a__b-1") }));
    const result = await runCli(["eval", join(dir, "preds.json"), "--subset", join(dir, "ds.json")]);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n").at(-1)).toBe(
      `swerun: dataset ${join(dir, "ds.json")} has no eval_script, log_parser, PASS_TO_PASS columns: swerun eval needs a SWE-bench 5.x dataset (rows with eval_script, log_parser, FAIL_TO_PASS, PASS_TO_PASS)`,
    );
  });

  it("refuses predictions for instances outside the dataset, and inputs that are not predictions", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "ds.json"), JSON.stringify([{ instance_id: "a__b-1", problem_statement: "p" }]));
    writeFileSync(join(dir, "preds.json"), JSON.stringify([pred("a__b-1"), pred("zz__other-2")]));
    const outside = await runCli(["eval", join(dir, "preds.json"), "--subset", join(dir, "ds.json")]);
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain("predictions for instances not in");
    expect(outside.stderr).toContain("zz__other-2");
    writeFileSync(join(dir, "notes.txt"), "x");
    const wrong = await runCli(["eval", join(dir, "notes.txt")]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("expected a run folder, or a predictions file (.json or .jsonl)");
    const timeout = await runCli(["eval", join(dir, "preds.json"), "--timeout", "0"]);
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain("--timeout: expected a number > 0, got 0");
  });

  it("names a run folder's torn run.json in one line", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "preds.json"), JSON.stringify({ "a__b-1": pred("a__b-1") }));
    writeFileSync(join(dir, "run.json"), '{"run_id": "r", "sub');
    const result = await runCli(["eval", dir]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(`^swerun: ${join(dir, "run.json")}: not a readable run.json \\(.*JSON.*\\)\n$`),
    );
  });
});

describe("run.json eval verdicts", () => {
  it("are merged per instance for the same eval run, replaced for another, and the rest of run.json kept", async () => {
    const path = join(tempDir(), "run.json");
    writeFileSync(path, JSON.stringify({ run_id: "r", exit_statuses: { Submitted: 2 } }));
    recordEvalInRunJson(path, { run_id: "e1", verdicts: { a: { resolved: true, status: "resolved" } } });
    recordEvalInRunJson(path, {
      run_id: "e1",
      report: "eval/m.e1.json",
      verdicts: { b: { resolved: false, status: "error", error: "x" } },
    });
    const first = JSON.parse(readFileSync(path, "utf8"));
    expect(first.exit_statuses).toEqual({ Submitted: 2 });
    expect(first.eval).toMatchObject({ run_id: "e1", report: "eval/m.e1.json", resolved: 1, graded: 1 });
    expect(Object.keys(first.eval.instances)).toEqual(["a", "b"]);
    recordEvalInRunJson(path, { run_id: "e2", verdicts: { b: { resolved: true, status: "resolved" } } });
    expect(Object.keys(JSON.parse(readFileSync(path, "utf8")).eval.instances)).toEqual(["b"]);
  });

  it("set each graded case's resolved (runs list/show read it); an error leaves the case ungraded", () => {
    const path = join(tempDir(), "run.json");
    const base = {
      exit_status: "Submitted",
      submitted: true,
      patch_lines: 1,
      steps: 1,
      cost: 0,
      duration_s: 1,
    };
    writeFileSync(
      path,
      JSON.stringify({ run_id: "r", cases: { a: base, b: base, c: { ...base, resolved: true } } }),
    );
    recordEvalInRunJson(path, {
      run_id: "e1",
      verdicts: {
        a: { resolved: true, status: "resolved" },
        b: { resolved: false, status: "empty_patch" },
        c: { resolved: false, status: "error", error: "x" },
        gone: { resolved: true, status: "resolved" },
      },
    });
    const { cases } = JSON.parse(readFileSync(path, "utf8"));
    expect(Object.keys(cases)).toEqual(["a", "b", "c"]);
    expect([cases.a.resolved, cases.b.resolved, cases.c.resolved]).toEqual([true, false, undefined]);
  });
});

describe("run.json written by a batch after grading", () => {
  const base = {
    exit_status: "Submitted",
    submitted: true,
    patch_lines: 1,
    steps: 2,
    cost: 0.5,
    duration_s: 3,
  };
  const record = (cases: Record<string, RunCase>) =>
    ({ run_id: "r", cases, totals: {} }) as unknown as RunRecord;

  it("keeps the eval key and the verdict of a case graded as it is, not of an instance run again", () => {
    const path = join(tempDir(), "run.json");
    writeRunRecord(path, record({ a: { ...base } as RunCase, b: { ...base } as RunCase }));
    recordEvalInRunJson(path, {
      run_id: "e1",
      verdicts: { a: { resolved: true, status: "resolved" }, b: { resolved: false, status: "unresolved" } },
    });
    // The batch's own record has no verdicts; b ran again (a new case).
    writeRunRecord(path, record({ a: { ...base } as RunCase, b: { ...base, steps: 7 } as RunCase }));
    const written = JSON.parse(readFileSync(path, "utf8"));
    expect(written.cases.a.resolved).toBe(true);
    expect(written.cases.b.resolved).toBeUndefined();
    expect(written.eval.instances.a).toEqual({ resolved: true, status: "resolved" });
  });
});
