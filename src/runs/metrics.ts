import { normalizeUsage } from "../models/cost.js";
import { isReadOnlyCommand } from "../report/command-name.js";

/**
 * sniffbench's behaviour metrics of one case (one trajectory), adapted to a bash agent, plus what matters for
 * SWE-bench. Tokens follow Anthropic's counting: `inputTokens` are prompt tokens that were neither read from
 * nor written to the cache, so `cacheHitRatio` = cache reads / (input + cache reads).
 */
export interface BehaviorMetrics {
  totalTokens: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Commands the model asked to run. */
  toolCount: number;
  /** Of those, commands that only read (see `isReadOnlyCommand`). */
  readCount: number;
  costUsd: number;
  explorationRatio: number;
  cacheHitRatio: number;
  avgToolDurationMs: number;
  tokensPerTool: number;
  tokensPerRead: number;
  steps: number;
  formatErrors: number;
  timeouts: number;
  wallTimeSeconds: number;
  patchLines: number;
}

type Json = Record<string, unknown>;
const obj = (value: unknown): Json =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
const round = (value: number, digits: number) => Math.round(value * 10 ** digits) / 10 ** digits;
const ratio = (a: number, b: number, digits: number) => (b > 0 ? round(a / b, digits) : 0);

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

/** The commands of an assistant message: swerun's and mini-swe-agent's `extra.actions`. */
function actionsOf(message: Json): string[] {
  const actions = obj(message.extra).actions;
  if (!Array.isArray(actions)) return [];
  return actions.map((action) => String(obj(action).command ?? "")).filter((command) => command !== "");
}

function isObservation(message: Json): boolean {
  const extra = obj(message.extra);
  return (message.role === "user" || message.role === "tool") && "returncode" in extra;
}

function isTimeout(extra: Json): boolean {
  const type = String(extra.exception_type ?? "");
  const info = String(extra.exception_info ?? "");
  return /timeout/i.test(type) || (extra.returncode === -1 && /timed out/i.test(info));
}

/** Whether a message is the feedback to a reply that could not be run (swerun's and mini-swe-agent's shapes). */
function isFormatError(message: Json, previous: Json | undefined): boolean {
  const extra = obj(message.extra);
  if (message.role !== "user" && message.role !== "tool") return false;
  if ("model_response" in extra || extra.format_error === true || extra.interrupt_type === "FormatError")
    return true;
  return (
    !isObservation(message) &&
    previous?.role === "assistant" &&
    actionsOf(previous).length === 0 &&
    message.role === "user" &&
    !("exit_status" in extra)
  );
}

/** The metrics of one trajectory (any of the formats swerun reads; what a file does not record counts 0). */
export function behaviorMetrics(trajectory: unknown): BehaviorMetrics {
  const root = obj(trajectory);
  const messages = (
    Array.isArray(trajectory) ? trajectory : Array.isArray(root.messages) ? root.messages : []
  )
    .map(obj)
    .filter((message) => typeof message.role === "string");
  const info = obj(root.info);
  let input = 0;
  let output = 0;
  let cacheRead = 0;
  let cacheWrite = 0;
  let toolCount = 0;
  let readCount = 0;
  let steps = 0;
  let formatErrors = 0;
  let timeouts = 0;
  let toolMs = 0;
  let timedTools = 0;
  const stamps: number[] = [];
  messages.forEach((message, index) => {
    const extra = obj(message.extra);
    if (typeof extra.timestamp === "number") stamps.push(extra.timestamp);
    const addUsage = () => {
      const usage = normalizeUsage(extra.usage ?? obj(extra.response).usage);
      if (usage) {
        cacheRead += usage.cache_read_tokens;
        cacheWrite += usage.cache_write_tokens;
        input += Math.max(0, usage.prompt_tokens - usage.cache_read_tokens - usage.cache_write_tokens);
        output += usage.completion_tokens;
      }
    };
    if (message.role === "assistant") {
      steps += 1;
      addUsage();
      for (const command of actionsOf(message)) {
        toolCount += 1;
        if (isReadOnlyCommand(command)) readCount += 1;
      }
    } else if (isObservation(message)) {
      if (typeof extra.duration_s === "number") {
        toolMs += extra.duration_s * 1000;
        timedTools += 1;
      }
      if (isTimeout(extra)) timeouts += 1;
    } else if (isFormatError(message, messages[index - 1])) {
      formatErrors += 1;
      // mini-swe-agent 2.x (and swerun) keep a reply that could not be run only in its feedback's `extra`.
      if ("response" in extra || "usage" in extra) {
        steps += 1;
        addUsage();
      }
    }
  });
  const stats = obj(info.model_stats);
  const apiCalls = typeof stats.api_calls === "number" ? stats.api_calls : steps;
  const submission = typeof info.submission === "string" ? info.submission : "";
  const total = input + output;
  return {
    totalTokens: total,
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: cacheRead,
    cacheWriteTokens: cacheWrite,
    toolCount,
    readCount,
    costUsd: round(typeof stats.instance_cost === "number" ? stats.instance_cost : 0, 4),
    explorationRatio: ratio(readCount, toolCount, 2),
    cacheHitRatio: ratio(cacheRead, input + cacheRead, 2),
    avgToolDurationMs: timedTools > 0 ? Math.round(toolMs / timedTools) : 0,
    tokensPerTool: toolCount > 0 ? Math.round(total / toolCount) : 0,
    tokensPerRead: readCount > 0 ? Math.round(total / readCount) : 0,
    steps: apiCalls,
    formatErrors,
    timeouts,
    wallTimeSeconds: stamps.length > 1 ? round(Math.max(...stamps) - Math.min(...stamps), 3) : 0,
    patchLines: patchLines(submission),
  };
}

/** Totals over cases: sums of the counts, ratios recomputed from the sums. */
export function sumMetrics(all: BehaviorMetrics[]): BehaviorMetrics {
  const sum = (key: keyof BehaviorMetrics) => all.reduce((total, metrics) => total + metrics[key], 0);
  const total = sum("totalTokens");
  const toolCount = sum("toolCount");
  const readCount = sum("readCount");
  const input = sum("inputTokens");
  const cacheRead = sum("cacheReadTokens");
  const timedMs = all.reduce((acc, metrics) => acc + metrics.avgToolDurationMs * metrics.toolCount, 0);
  return {
    totalTokens: total,
    inputTokens: input,
    outputTokens: sum("outputTokens"),
    cacheReadTokens: cacheRead,
    cacheWriteTokens: sum("cacheWriteTokens"),
    toolCount,
    readCount,
    costUsd: round(sum("costUsd"), 4),
    explorationRatio: ratio(readCount, toolCount, 2),
    cacheHitRatio: ratio(cacheRead, input + cacheRead, 2),
    avgToolDurationMs: toolCount > 0 ? Math.round(timedMs / toolCount) : 0,
    tokensPerTool: toolCount > 0 ? Math.round(total / toolCount) : 0,
    tokensPerRead: readCount > 0 ? Math.round(total / readCount) : 0,
    steps: sum("steps"),
    formatErrors: sum("formatErrors"),
    timeouts: sum("timeouts"),
    wallTimeSeconds: round(sum("wallTimeSeconds"), 3),
    patchLines: sum("patchLines"),
  };
}
