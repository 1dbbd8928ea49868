import { describe, expect, it } from "vitest";
import { isReadOnlyCommand } from "../../src/facts/command-name.js";
import { runFactsOf } from "../../src/facts/read-run.js";
import type { Message } from "../../src/messages.js";
import { caseTotals, behaviorMetrics as metricsOfFacts, patchLines } from "../../src/tracking/metrics.js";
import type { LoadedTrajectory } from "../../src/trajectory/reader.js";

/** The metrics of a trajectory as every reader gets them: from its facts. */
function behaviorMetrics(trajectory: { info?: Record<string, unknown>; messages: unknown[] } | unknown[]) {
  const loaded: LoadedTrajectory = Array.isArray(trajectory)
    ? { path: "t.traj.json", kind: "message-list", info: {}, messages: trajectory as Message[], extras: {} }
    : {
        path: "t.traj.json",
        kind: "mini-swe-agent-1.1",
        info: trajectory.info ?? {},
        messages: trajectory.messages as Message[],
        extras: {},
      };
  return metricsOfFacts(runFactsOf(loaded));
}

const usage = (prompt: number, completion: number, cached: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  prompt_tokens_details: { cached_tokens: cached },
});

/** A small trajectory whose metrics are computed by hand below. */
const trajectory = {
  info: {
    model_stats: { instance_cost: 0.123456, api_calls: 4 },
    exit_status: "Submitted",
    submission: "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n-old\n+new\n+more\n",
  },
  messages: [
    { role: "system", content: "s" },
    { role: "user", content: "task", extra: { timestamp: 100 } },
    {
      role: "assistant",
      content: "look",
      extra: {
        actions: [{ command: "cd /testbed && grep -rn foo src | head" }],
        usage: usage(1000, 50, 0),
        timestamp: 101,
      },
    },
    { role: "user", content: "out", extra: { returncode: 0, duration_s: 0.2, timestamp: 101.5 } },
    {
      role: "assistant",
      content: "edit",
      extra: {
        actions: [{ command: "sed -i 's/a/b/' x.py" }, { command: "python x.py" }],
        usage: usage(1500, 100, 1000),
        timestamp: 102,
      },
    },
    { role: "tool", content: "out", extra: { returncode: 0, duration_s: 0.4, timestamp: 102.5 } },
    {
      role: "tool",
      content: "timed out",
      extra: { returncode: -1, duration_s: 3, exception_info: "The command timed out", timestamp: 106 },
    },
    { role: "assistant", content: "no command", extra: { usage: usage(2000, 10, 1500), timestamp: 107 } },
    { role: "user", content: "Please always provide exactly one action", extra: { timestamp: 107 } },
    {
      role: "assistant",
      content: "submit",
      extra: { actions: [{ command: "git diff" }], usage: usage(2100, 40, 2000), timestamp: 108 },
    },
    { role: "exit", content: "", extra: { exit_status: "Submitted", submission: "", timestamp: 110 } },
  ],
};

describe("behaviour metrics", () => {
  it("matches the values computed by hand", () => {
    // uncached input: 1000 + 500 + 500 + 100 = 2100; output 50 + 100 + 10 + 40 = 200; cache reads 4500
    // commands: grep|head (read), sed -i (write), python (write), git diff (read) = 4, reads 2
    // tool durations: 200, 400, 3000 ms and none for the submitting git diff → 900 average (sniffbench
    // divides by every tool call, a call without a duration counting 0)
    expect(behaviorMetrics(trajectory)).toEqual({
      totalTokens: 2300,
      inputTokens: 2100,
      outputTokens: 200,
      cacheReadTokens: 4500,
      cacheWriteTokens: 0,
      toolCount: 4,
      readCount: 2,
      costUsd: 0.1235,
      explorationRatio: 0.5,
      cacheHitRatio: 0.68,
      avgToolDurationMs: 900,
      tokensPerTool: 575,
      tokensPerRead: 1150,
      toolDurationMs: 3600,
      steps: 4,
      formatErrors: 1,
      timeouts: 1,
      wallTimeSeconds: 10,
      patchLines: 3,
    });
  });

  it("counts what a file does not record as 0, and sums ratios from the sums", () => {
    const empty = behaviorMetrics([{ role: "system", content: "x" }]);
    expect(empty.totalTokens).toBe(0);
    expect(empty.explorationRatio).toBe(0);
    const total = caseTotals(
      [behaviorMetrics(trajectory), behaviorMetrics(trajectory), empty].map((behaviorMetrics) => ({
        behaviorMetrics,
      })),
    );
    expect(total.totalTokens).toBe(4600);
    expect(total.toolCount).toBe(8);
    expect(total.explorationRatio).toBe(0.5);
    expect(total.costUsd).toBe(0.247);
    expect(total.avgToolDurationMs).toBe(900);
  });

  it("counts diff lines without headers", () => {
    expect(patchLines("--- a/x\n+++ b/x\n@@\n-a\n+b\n c\n")).toBe(2);
    expect(patchLines("")).toBe(0);
  });
});

describe("read-only commands", () => {
  it.each([
    ["cat a.py", true],
    ["cd /testbed && grep -rn foo . | head -20", true],
    ["nl -ba x.py | sed -n '10,40p'", true],
    ["git log --oneline -5", true],
    ["git diff", true],
    ["find . -name '*.py'", true],
    ["ls -la", true],
    ["FOO=1 cat x", true],
    ["sed -i 's/a/b/' x.py", false],
    ["sed -n '1,5p' x.py", true],
    ["python reproduce.py", false],
    ["cat <<'EOF' > x.py", false],
    ["echo hi > file", false],
    ["git commit -m x", false],
    ["cd /testbed", true],
    ["grep foo x 2>/dev/null", true],
  ])("%s → %s", (command, expected) => {
    expect(isReadOnlyCommand(command)).toBe(expected);
  });
});

describe("behaviour metrics of mini-swe-agent 2.x's format errors", () => {
  it("counts a format error recorded only as feedback (text and tool calls), with its call's usage", () => {
    const feedback = (role: string) => ({
      role,
      content: "Tool call error: no tool calls",
      extra: { interrupt_type: "FormatError", cost: 0, response: { usage: usage(300, 20, 0) } },
    });
    const metrics = behaviorMetrics({
      messages: [
        { role: "system", content: "s" },
        { role: "user", content: "task" },
        feedback("user"),
        { ...feedback("user"), extra: { ...feedback("user").extra, model_response: "no block" } },
        {
          role: "assistant",
          content: "submit",
          extra: { actions: [{ command: "git diff" }], usage: usage(400, 10, 0) },
        },
      ],
    });
    expect(metrics).toMatchObject({ formatErrors: 2, steps: 3, inputTokens: 1000, outputTokens: 50 });
  });
});
