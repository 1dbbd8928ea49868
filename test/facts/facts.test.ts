import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FolderFacts } from "../../src/facts/folder-facts.js";
import { folderVerdicts, instanceVerdict } from "../../src/facts/folder-verdicts.js";
import { runFactsOf } from "../../src/facts/read-run.js";
import { runTotals } from "../../src/facts/run-totals.js";
import type { Message } from "../../src/messages.js";
import type { LoadedTrajectory } from "../../src/trajectory/reader.js";
import { instanceDetail } from "../../src/view/instance-detail.js";
import { tempDir } from "../helpers/tmp.js";

const usage = (prompt: number, cached = 0) => ({
  prompt_tokens: prompt,
  completion_tokens: 10,
  prompt_tokens_details: { cached_tokens: cached },
});

/**
 * swerun's current shape: a reply that could not be run is kept only in its feedback's `extra` (with its cost).
 * Written by hand with only the keys the facts read, as a file may hold them (hence the cast).
 */
const messages = [
  { role: "system", content: "s" },
  { role: "user", content: "task", extra: { timestamp: 100 } },
  {
    role: "assistant",
    content: "look",
    extra: { actions: [{ command: "ls" }], cost: 0.001, usage: usage(100), duration_s: 0.5, timestamp: 101 },
  },
  { role: "user", content: "out", extra: { returncode: 0, duration_s: 0.25, timestamp: 101.5 } },
  {
    role: "user",
    content: "Your last reply could not be run",
    extra: {
      interrupt_type: "FormatError",
      model_response: "no command here",
      cost: 0.0014,
      usage: usage(200, 50),
      duration_s: 0.5,
      timestamp: 103,
      retries: [{ attempt: 1, error: "HTTP 503", duration_s: 0.1, delay_s: 0 }],
    },
  },
  {
    role: "assistant",
    content: "submit",
    extra: {
      actions: [{ command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff" }],
      cost: 0.002,
      usage: usage(300, 100),
      duration_s: 1,
      timestamp: 105,
    },
  },
  { role: "exit", content: "", extra: { exit_status: "Submitted", submission: "diff", timestamp: 106 } },
] as Message[];

const loaded = (info: Record<string, unknown> = {}): LoadedTrajectory => ({
  path: "i.traj.json",
  kind: "mini-swe-agent-1.1",
  info: {
    model_stats: { instance_cost: 0.0044, api_calls: 3 },
    exit_status: "Submitted",
    submission: "diff",
    ...info,
  },
  messages,
  extras: { instance_id: "o__r-1" },
});

describe("the facts of a trajectory", () => {
  it("give each step its own call's cost, tokens and retries: none shifted after a format error", () => {
    const facts = runFactsOf(loaded());
    expect(facts.turns.map((turn) => turn.cost)).toEqual([0.001, 0.0014, 0.002]);
    expect(facts.turns.map((turn) => turn.format_error !== null)).toEqual([false, true, false]);
    expect(facts.turns[1]?.tokens).toEqual({
      prompt: 200,
      completion: 10,
      cache_read: 50,
      cache_write: 0,
      input: 150,
    });
    expect(facts.turns[1]?.retries).toEqual([{ error: "HTTP 503", duration_s: 0.1, delay_s: 0 }]);
    expect(facts).toMatchObject({ steps: 3, format_errors: 1, retries: 1, tool_calls: 2, read_calls: 2 });
    expect(facts.tokens).toEqual({
      prompt: 600,
      completion: 30,
      cache_read: 150,
      cache_write: 0,
      input: 450,
    });
    // The view's steps read the same costs; their sum is the instance's cost.
    const steps = instanceDetail(loaded(), null, facts).steps;
    expect(steps.map((step) => step.cost)).toEqual([0.001, 0.0014, 0.002]);
  });

  it("time an instance as the batch recorded it, else from the first to the last recorded time", () => {
    expect(runFactsOf(loaded())).toMatchObject({
      started_at: 100,
      ended_at: 106,
      wall_time_s: 6,
      timing: "messages",
    });
    const timing = { started_at: 99.5, ended_at: 107.25, wall_time_s: 7.75 };
    expect(runFactsOf(loaded({ swerun_timing: timing }))).toMatchObject({
      started_at: 99.5,
      ended_at: 107.25,
      wall_time_s: 7.75,
      timing: "batch",
    });
  });
});

describe("verdicts", () => {
  function folder(record: Record<string, unknown>, reports: Record<string, boolean> = {}): string {
    const dir = tempDir();
    writeFileSync(join(dir, "run.json"), JSON.stringify(record));
    for (const [id, resolved] of Object.entries(reports)) {
      const reportDir = join(dir, "eval", "logs", "run_evaluation", "r", "m", id);
      mkdirSync(reportDir, { recursive: true });
      writeFileSync(join(reportDir, "report.json"), JSON.stringify({ [id]: { resolved } }));
    }
    return dir;
  }

  it("read why: run.json's eval first, then the harness's reports, then a case's flag", () => {
    const dir = folder(
      {
        run_id: "r",
        cases: { old: { resolved: true }, both: { resolved: false } },
        eval: {
          updated_at: "2026-01-01T00:00:00.000Z",
          instances: {
            a: { resolved: true, status: "resolved" },
            b: { resolved: false, status: "unresolved" },
            c: { resolved: false, status: "empty_patch" },
            d: {
              resolved: false,
              status: "error",
              error: ">>>>> Patch Apply Failed:\npatch: **** malformed",
            },
            e: { resolved: false, status: "error", error: "timed out after 1800 s" },
          },
        },
      },
      { both: true, only: false },
    );
    const verdicts = folderVerdicts(dir);
    const reason = (id: string) => {
      const verdict = verdicts.byId.get(id);
      return verdict ? [verdict.reason, verdict.resolved] : undefined;
    };
    expect(["a", "b", "c", "d", "e", "only", "both", "old"].map(reason)).toEqual([
      ["resolved", true],
      ["unresolved", false],
      ["empty_patch", false],
      ["patch_failed", false],
      ["error", null],
      ["unresolved", false],
      ["resolved", true],
      ["resolved", true],
    ]);
    expect(verdicts.byId.get("a")?.graded_at).toBe("2026-01-01T00:00:00.000Z");
    // An evaluated folder's instance that submitted nothing is an empty patch, as the harness counts it.
    expect(instanceVerdict(verdicts, "z", { exit_status: "LimitsExceeded", submission: "" }).reason).toBe(
      "empty_patch",
    );
    expect(instanceVerdict(verdicts, "z", { exit_status: "Submitted", submission: "diff" }).reason).toBe(
      "not_evaluated",
    );
    const fresh = folderVerdicts(folder({ run_id: "r", cases: {} }));
    expect(instanceVerdict(fresh, "z", { exit_status: "Submitted", submission: "" }).reason).toBe(
      "not_evaluated",
    );
  });

  it("sum into the run's totals, with the instance's facts", () => {
    const dir = folder({
      run_id: "r",
      eval: { instances: { "o__r-1": { resolved: false, status: "unresolved" } } },
    });
    const path = join(dir, "i.traj.json");
    writeFileSync(
      path,
      JSON.stringify({
        info: loaded().info,
        messages,
        trajectory_format: "mini-swe-agent-1.1",
        instance_id: "o__r-1",
      }),
    );
    const facts = new FolderFacts(dir).read(path);
    expect(facts.verdict).toMatchObject({ resolved: false, reason: "unresolved" });
    const totals = runTotals([
      facts,
      { ...facts, id: "two", verdict: { ...facts.verdict, resolved: true, reason: "resolved" } },
    ]);
    expect(totals).toMatchObject({
      instances: 2,
      submitted: 2,
      graded: 2,
      resolved: 1,
      steps: 6,
      cost: 0.0088,
      format_errors: 2,
      exit_statuses: { Submitted: 2 },
    });
    expect(totals.verdicts).toMatchObject({ resolved: 1, unresolved: 1, not_evaluated: 0 });
  });
});
