import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { factsWithoutTrajectory, readRunFacts } from "../../src/facts/read-run.js";
import type { RunFacts, ToolCallFacts, TurnFacts } from "../../src/facts/run-facts.js";
import { metricDelta } from "../../src/tracking/compare-text.js";
import { behaviorMetrics } from "../../src/tracking/metrics.js";
import { colorsFor, seedDate } from "../../src/tracking/terminal-layout.js";
import { packageRoot } from "../../src/util/package-root.js";

// sniffbench's own functions made these (scripts/gen-sniffbench-fixtures.mjs), its dates in UTC.
process.env.TZ = "UTC";
const fixture = JSON.parse(readFileSync(join(packageRoot(), "test/fixtures/runs/sniffbench.json"), "utf8"));
const SEED_KEYS = Object.keys(fixture.metrics[0].behaviorMetrics) as Array<
  keyof ReturnType<typeof behaviorMetrics>
>;
const seedPart = (metrics: ReturnType<typeof behaviorMetrics>) =>
  Object.fromEntries(SEED_KEYS.map((key) => [key, metrics[key]]));

/** Facts holding only what sniffbench's metrics read: tokens, cost and the tool calls (`Read` = read-only). */
function factsOf(input: {
  tokens: Record<string, number>;
  costUsd: number;
  toolCalls: Array<{ name: string; durationMs?: number }>;
}): RunFacts {
  const tokens = input.tokens as Record<string, number>;
  const calls = input.toolCalls.map(
    (call) =>
      ({
        command: call.name === "Read" ? "cat x" : "python x.py",
        duration_s: call.durationMs === undefined ? null : call.durationMs / 1000,
      }) as ToolCallFacts,
  );
  return {
    ...factsWithoutTrajectory("x.traj.json", { exit_status: "Submitted", error: null }),
    tokens: {
      prompt: (tokens.inputTokens ?? 0) + (tokens.cacheReadTokens ?? 0) + (tokens.cacheWriteTokens ?? 0),
      completion: tokens.outputTokens ?? 0,
      cache_read: tokens.cacheReadTokens ?? 0,
      cache_write: tokens.cacheWriteTokens ?? 0,
      input: tokens.inputTokens ?? 0,
    },
    cost: input.costUsd,
    tool_calls: calls.length,
    read_calls: input.toolCalls.filter((call) => call.name === "Read").length,
    turns: [{ tool_calls: calls } as TurnFacts],
  };
}

describe("sniffbench's behaviour metrics, as its computeBehaviorMetrics computes them", () => {
  for (const entry of fixture.metrics as Array<{ trajectory: string; behaviorMetrics: unknown }>) {
    it(entry.trajectory, () => {
      const metrics = behaviorMetrics(readRunFacts(join(packageRoot(), entry.trajectory)));
      expect(seedPart(metrics)).toEqual(entry.behaviorMetrics);
    });
  }

  it("edge cases: no tool call at all, calls without a duration (0 ms), cache reads and writes", () => {
    for (const entry of fixture.edge)
      expect(seedPart(behaviorMetrics(factsOf(entry.input)))).toEqual(entry.behaviorMetrics);
  });
});

describe("sniffbench's formatting", () => {
  for (const entry of fixture.deltas as Array<{
    old: number;
    new: number;
    lowerIsBetter: boolean;
    text: string;
  }>) {
    it(`delta ${entry.old} → ${entry.new} (lower is better: ${entry.lowerIsBetter}) is ${entry.text}`, () => {
      expect(metricDelta(entry.old, entry.new, entry.lowerIsBetter, colorsFor(false))).toBe(entry.text);
    });
  }

  it("dates as runs list / compare (day) and runs show (with time) print them", () => {
    for (const entry of fixture.dates) {
      expect(seedDate(entry.iso)).toBe(entry.compare);
      expect(seedDate(entry.iso, true)).toBe(entry.runs);
    }
  });
});
