import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readRunFacts } from "../../src/facts/read-run.js";
import { NO_TOKENS, NOT_EVALUATED, type RunFacts } from "../../src/facts/run-facts.js";
import { judgeMarkdown, judgeRecord } from "../../src/reports/judge.js";
import { buildReport, pythonIsoformat } from "../../src/reports/report-json.js";
import { packageRoot } from "../../src/util/package-root.js";
import { tempDir } from "../helpers/tmp.js";

/** A mini-swe-agent 1.x trajectory: text actions, no `extra`, the submission in `info`. */
function miniV1(dir: string): string {
  const path = join(dir, "django__django-11099.traj.json");
  const trajectory = {
    info: {
      exit_status: "Submitted",
      submission: "diff --git a/x b/x\n",
      model_stats: { instance_cost: 0.5, api_calls: 2 },
      mini_version: "1.9.0",
      config: {
        model: { model_name: "anthropic/claude-sonnet-4" },
        agent: { step_limit: 250, mode: "yolo" },
      },
    },
    messages: [
      { role: "system", content: "You are a helpful assistant." },
      { role: "user", content: "<pr_description>Fix it</pr_description>" },
      { role: "assistant", content: "THOUGHT: look.\n\n```bash\ncd /testbed && grep -rn foo .\n```" },
      { role: "user", content: "<returncode>1</returncode>\n<output>\n</output>" },
      {
        role: "assistant",
        content: "THOUGHT: done.\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff\n```",
      },
      { role: "user", content: "diff --git a/x b/x\n" },
    ],
    trajectory_format: "mini-swe-agent-1",
  };
  writeFileSync(path, JSON.stringify(trajectory));
  return path;
}

describe("readRunFacts", () => {
  it("reads a mini-swe-agent 1.x trajectory, with null for what it does not record", () => {
    const facts = readRunFacts(miniV1(tempDir()));
    expect(facts).toMatchObject({
      id: "django__django-11099",
      format: "mini-swe-agent-1",
      task: null,
      prompt: "<pr_description>Fix it</pr_description>",
      model: "anthropic/claude-sonnet-4",
      exit_status: "Submitted",
      cost: 0.5,
      started_at: null,
      ended_at: null,
    });
    expect(facts.turns).toHaveLength(2);
    expect(facts.turns[0]).toMatchObject({
      duration_s: null,
      finish_reason: null,
      prompt_tokens: null,
      retries: [],
    });
    expect(facts.turns[0]?.tool_calls[0]).toMatchObject({ name: "grep", returncode: 1, duration_s: null });
    const report = buildReport(facts);
    expect(report.timestamp).toBeNull();
    expect(report.provider).toBe("anthropic");
    expect(report.stats).toMatchObject({ total_llm_time_s: null, tool_calls_failed: 1, llm_calls: 2 });
    expect(report.settings).toMatchObject({ max_turns: 250, yolo: true, allowed_commands: [] });
  });
});

/** A swerun trajectory in mini-swe-agent's 1.1 format: `messages` after the system prompt and the task. */
function swerunTrajectory(dir: string, messages: unknown[], info: Record<string, unknown>): string {
  const path = join(dir, "run.traj.json");
  const head = [
    { role: "system", content: "sys" },
    { role: "user", content: "task" },
  ];
  writeFileSync(
    path,
    JSON.stringify({ info, messages: [...head, ...messages], trajectory_format: "mini-swe-agent-1.1" }),
  );
  return path;
}

describe("facts named apart", () => {
  it("counts steps, model calls and request attempts of a run whose every attempt failed", () => {
    const exit = {
      role: "exit",
      content: "the model request failed 3 times",
      extra: {
        exit_status: "ModelRetriesExhaustedError",
        submission: "",
        exception_str: "the model request failed 3 times",
        exit_code: 2,
        retries: [1, 2, 3].map((attempt) => ({ attempt, error: "HTTP 503", duration_s: 0.1, delay_s: 0 })),
      },
    };
    const info = { model_stats: { instance_cost: 0, api_calls: 1 }, exit_status: exit.extra.exit_status };
    const facts = readRunFacts(swerunTrajectory(tempDir(), [exit], info));
    expect(facts).toMatchObject({ steps: 0, api_calls: 1, attempts: 3, submitted: false, empty_patch: true });
    expect(buildReport(facts).stats).toMatchObject({ turns: 0, llm_calls: 3 });
  });

  it("reads the submitting command as it ran from the exit message, and a submitted empty patch as both", () => {
    const command = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT";
    const messages = [
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: "{}" } }],
        extra: { actions: [{ command, tool_call_id: "c1" }], timestamp: 100, duration_s: 1 },
      },
      {
        role: "tool",
        tool_call_id: "c1",
        content: "not executed",
        extra: { raw_output: "", returncode: -1, exception_info: "action was not executed", timestamp: 103 },
      },
      {
        role: "exit",
        content: "",
        extra: {
          exit_status: "Submitted",
          submission: "",
          submit_action: { command, returncode: 0, duration_s: 0.25, timestamp: 102 },
        },
      },
    ];
    const info = {
      model_stats: { instance_cost: 0.1, api_calls: 1 },
      exit_status: "Submitted",
      submission: "",
    };
    const facts = readRunFacts(swerunTrajectory(tempDir(), messages, info));
    expect(facts).toMatchObject({ submitted: true, empty_patch: true, steps: 1, attempts: 1 });
    expect(facts.turns[0]?.tool_calls).toEqual([
      expect.objectContaining({ returncode: 0, duration_s: 0.25, started_at: 101.75, failed: false }),
    ]);
  });
});

describe("the judge markdown", () => {
  const base: RunFacts = {
    id: "t",
    path: "t.traj.json",
    format: "mini-swe-agent-1.1",
    instance_id: null,
    task: "task",
    prompt: null,
    model: null,
    model_class: null,
    model_kwargs: null,
    agent_config: null,
    exit_status: "Submitted",
    submitted: true,
    submission: "x".repeat(250),
    empty_patch: false,
    error_message: null,
    cost: null,
    api_calls: null,
    attempts: 0,
    started_at: 100,
    ended_at: 101.5,
    wall_time_s: 1.5,
    timing: "messages",
    steps: 0,
    tokens: NO_TOKENS,
    tool_calls: 0,
    read_calls: 0,
    failed_tool_calls: 0,
    format_errors: 0,
    timeouts: 0,
    retries: 0,
    verdict: NOT_EVALUATED,
    turns: [],
  };

  it("truncates messages at 100 characters, the output at 200, and long code to 8 + 4 lines", () => {
    const command = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n");
    const facts: RunFacts = {
      ...base,
      tool_calls: 1,
      failed_tool_calls: 1,
      turns: [
        {
          turn: 1,
          content: "m".repeat(150),
          reasoning: "short thought",
          finish_reason: "tool_calls",
          prompt_tokens: 10,
          tokens: null,
          cost: null,
          duration_s: 0.5,
          timestamp: 100.5,
          started_at: 100,
          retries: [],
          format_error: null,
          format_feedback: null,
          tool_calls: [
            {
              command,
              name: "line",
              returncode: 2,
              output: "o",
              exception_info: "",
              timed_out: false,
              duration_s: 0.25,
              started_at: 100.75,
              failed: true,
            },
          ],
        },
      ],
    };
    const record = judgeRecord(facts);
    expect(record.timing).toEqual({ start: 100000, end: 101500, firstResponse: 500 });
    expect(record.trajectory.map((step) => [step.stepId, step.type, step.timestamp])).toEqual([
      ["t-step-1", "thought", 500],
      ["t-step-2", "message", 500],
      ["t-step-3", "tool_call", 750],
    ]);
    const markdown = judgeMarkdown(record);
    expect(markdown).toContain(
      `1. [THOUGHT] short thought [->t-step-1]\n2. [MESSAGE] ${"m".repeat(100)}... [->t-step-2]\n`,
    );
    expect(markdown).toContain("3. [TOOL:line] -> failed (250ms) [->t-step-3]\n   ```bash\n   line 1\n");
    expect(markdown).toContain("   line 8\n\n   // ... 8 lines omitted ...\n\n   line 17\n");
    expect(markdown).not.toContain("line 9\n");
    expect(markdown).toContain(`**Output:** ${"x".repeat(200)}...\n**Metadata:** instance_id=null, `);
    expect(markdown).toContain(", agent=swerun, ");
    expect(markdown).toContain(", exit_status=Submitted, ");
    // The command exited with 2: a failed tool call, so the run "failed" (the seed: passed = no tool errors).
    expect(markdown.endsWith("**Status:** failed\n**Duration:** 1500ms\n\n---\n\n")).toBe(true);
  });

  it("formats times as Python's isoformat in UTC", () => {
    expect(pythonIsoformat(1772015788.312457)).toBe("2026-02-25T10:36:28.312457+00:00");
  });
});

describe("readRunFacts on mini-swe-agent 2.x's own trajectories (test/fixtures/parity)", () => {
  const parity = (name: string) =>
    join(packageRoot(), "test", "fixtures", "parity", "expected", `${name}.traj.json`);

  it("reads a format error's reply, finish reason and usage from its feedback message", () => {
    const facts = readRunFacts(parity("format-errors-toolcall"));
    expect(facts.turns).toHaveLength(10);
    expect(facts.turns[0]).toMatchObject({
      content: "No tool call.",
      finish_reason: "stop",
      prompt_tokens: 10,
      tool_calls: [],
    });
    expect(facts.turns[0]?.format_error).toMatch(/^Tool call error:/);
    expect(facts.turns[7]).toMatchObject({ content: "Cut off.", finish_reason: "length" });
    expect(buildReport(facts).stats).toMatchObject({ llm_calls: 10, truncated_responses: 1 });
    expect(readRunFacts(parity("format-errors-text")).turns[0]?.content).toBe("No action here.");
  });

  it("counts the command that submitted, which has no observation, as a succeeded call printing the submission", () => {
    const submitted = (name: string) => readRunFacts(parity(name)).turns.at(-1)?.tool_calls;
    const submit = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; echo patch";
    // interactive: what ran before it was observed, what came after never ran
    expect(submitted("text-multi-action-submit-interactive")).toEqual([
      expect.objectContaining({ command: "echo first", returncode: 0, output: "first\n" }),
      expect.objectContaining({
        command: submit,
        name: "echo",
        returncode: 0,
        output: "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\npatch\n",
        timed_out: false,
        duration_s: null,
      }),
    ]);
    // default: the whole step is unobserved; the command printing the marker submitted
    expect(submitted("text-multi-action-submit-default")).toEqual([
      expect.objectContaining({ command: submit, returncode: 0 }),
    ]);
    expect(submitted("toolcall-submit-default")).toEqual([
      expect.objectContaining({
        command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT; echo diff",
        returncode: 0,
      }),
    ]);
    // a run that did not submit gets no such call
    expect(readRunFacts(parity("step-limit")).turns.at(-1)?.tool_calls).toEqual([
      expect.objectContaining({ command: "echo 2", output: "2\n" }),
    ]);
  });
});
