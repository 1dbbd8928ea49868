import { roundSeconds, roundUsd } from "../facts/figures.js";
import { type RunFacts, totalTokens } from "../facts/run-facts.js";
import type { BehaviorMetrics } from "../formats/run-json.js";

const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;

/** Lines a unified diff adds or removes (its `+`/`-` lines, headers excluded). */
export function patchLines(patch: string): number {
  let lines = 0;
  for (const line of patch.split("\n")) {
    if (
      (line.startsWith("+") && !line.startsWith("+++")) ||
      (line.startsWith("-") && !line.startsWith("---"))
    )
      lines += 1;
  }
  return lines;
}

interface Counts {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  toolCount: number;
  readCount: number;
  cost: number;
  toolDurationMs: number;
  steps: number;
  formatErrors: number;
  timeouts: number;
  wallTimeSeconds: number;
  patchLines: number;
}

function fromCounts(counts: Counts): BehaviorMetrics {
  const total = totalTokens({
    prompt: counts.inputTokens + counts.cacheReadTokens + counts.cacheWriteTokens,
    completion: counts.outputTokens,
    cache_read: counts.cacheReadTokens,
    cache_write: counts.cacheWriteTokens,
    input: counts.inputTokens,
  });
  const tools = Math.max(counts.toolCount, 1);
  const input = counts.inputTokens + counts.cacheReadTokens;
  return {
    totalTokens: total,
    inputTokens: counts.inputTokens,
    outputTokens: counts.outputTokens,
    cacheReadTokens: counts.cacheReadTokens,
    cacheWriteTokens: counts.cacheWriteTokens,
    toolCount: counts.toolCount,
    readCount: counts.readCount,
    costUsd: roundUsd(counts.cost),
    explorationRatio: round(counts.readCount / tools, 2),
    cacheHitRatio: input > 0 ? round(counts.cacheReadTokens / input, 2) : 0,
    avgToolDurationMs: Math.round(counts.toolDurationMs / tools),
    tokensPerTool: Math.round(total / tools),
    tokensPerRead: counts.readCount > 0 ? Math.round(total / counts.readCount) : 0,
    toolDurationMs: Math.round(counts.toolDurationMs),
    steps: counts.steps,
    formatErrors: counts.formatErrors,
    timeouts: counts.timeouts,
    wallTimeSeconds: roundSeconds(counts.wallTimeSeconds),
    patchLines: counts.patchLines,
  };
}

/** The metrics of one instance, from its facts. */
export function behaviorMetrics(facts: RunFacts): BehaviorMetrics {
  const durations = facts.turns.flatMap((turn) => turn.tool_calls.map((call) => call.duration_s ?? 0));
  return fromCounts({
    inputTokens: facts.tokens.input,
    outputTokens: facts.tokens.completion,
    cacheReadTokens: facts.tokens.cache_read,
    cacheWriteTokens: facts.tokens.cache_write,
    toolCount: facts.tool_calls,
    readCount: facts.read_calls,
    cost: facts.cost ?? 0,
    toolDurationMs: durations.reduce((sum, seconds) => sum + seconds * 1000, 0),
    steps: facts.steps,
    formatErrors: facts.format_errors,
    timeouts: facts.timeouts,
    wallTimeSeconds: facts.wall_time_s ?? 0,
    patchLines: patchLines(facts.submission),
  });
}

/** What the totals of cases are summed from: each case's metrics and its cost at full precision. */
export interface SummedCase {
  behaviorMetrics: BehaviorMetrics;
  /** The case's cost unrounded (`RunCase.cost`); `behaviorMetrics.costUsd` (4 decimals) for cases without it. */
  cost?: number;
}

/** The cost of cases summed at full precision (run.json's `total_cost`; `costUsd` of their totals, rounded). */
export function casesCost(cases: SummedCase[]): number {
  return cases.reduce((total, c) => total + (c.cost ?? c.behaviorMetrics.costUsd ?? 0), 0);
}

/**
 * Totals over cases: sums of the counts, ratios and averages recomputed from the sums; the cost summed at
 * full precision and rounded once (summing the cases' 4-decimal `costUsd` would drift from the run's cost).
 */
export function caseTotals(cases: SummedCase[]): BehaviorMetrics {
  const all = cases.map((c) => c.behaviorMetrics);
  const sum = (key: keyof BehaviorMetrics) => all.reduce((total, metrics) => total + (metrics[key] ?? 0), 0);
  return fromCounts({
    inputTokens: sum("inputTokens"),
    outputTokens: sum("outputTokens"),
    cacheReadTokens: sum("cacheReadTokens"),
    cacheWriteTokens: sum("cacheWriteTokens"),
    toolCount: sum("toolCount"),
    readCount: sum("readCount"),
    cost: casesCost(cases),
    // Cases recorded before `toolDurationMs` existed: their average times their count.
    toolDurationMs: all.reduce(
      (total, metrics) => total + (metrics.toolDurationMs ?? metrics.avgToolDurationMs * metrics.toolCount),
      0,
    ),
    steps: sum("steps"),
    formatErrors: sum("formatErrors"),
    timeouts: sum("timeouts"),
    wallTimeSeconds: sum("wallTimeSeconds"),
    patchLines: sum("patchLines"),
  });
}
