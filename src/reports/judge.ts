import { type RunFacts, repoOfInstance, type TurnFacts } from "../facts/run-facts.js";
import { durationMs, type ExportStatus, exportStatus } from "../facts/status.js";
import { inputOf, outputOf } from "./summary.js";

/**
 * A step of the `judge` export: the harness's `TrajectoryStep` kinds only. A reply that could not be run is
 * followed by a `message` holding the feedback swerun sent, marked with swerun's added `format_error` (the
 * error); a command's step adds its `returncode`.
 */
type StepBody =
  | { type: "thought"; content: string; timestamp: number | null }
  | { type: "message"; content: string; timestamp: number | null; format_error?: string }
  | {
      type: "tool_call";
      name: string;
      status: "completed" | "failed";
      /** The command; for a tool call whose arguments were not valid JSON, those arguments as sent. */
      input: { command: string } | { arguments: string };
      output: string;
      duration: number | null;
      timestamp: number | null;
      returncode: number | null;
    };
export type JudgeStep = StepBody & { stepId: string };

/** One line of `<PATH>.full.jsonl`, with the harness's `FullResult` keys. */
export interface JudgeRecord {
  id: string;
  input: string;
  output: string;
  trajectory: JudgeStep[];
  metadata: Record<string, unknown>;
  timing: { start: number | null; end: number | null; firstResponse?: number };
  status: ExportStatus;
  errors?: string[];
}

/** What `metadata.agent` names (the harness names the ACP agent command it ran). */
export const AGENT = "swerun";

const ms = (seconds: number | null) => (seconds === null ? null : Math.round(seconds * 1000));

/** The steps of one turn: its thought, its message, its invalid tool calls and format error, its commands. */
function turnSteps(turn: TurnFacts, relative: (time: number | null) => number | null): StepBody[] {
  const at = relative(turn.timestamp);
  const steps: StepBody[] = [];
  if (turn.reasoning) steps.push({ type: "thought", content: turn.reasoning, timestamp: at });
  if (turn.content?.trim()) steps.push({ type: "message", content: turn.content, timestamp: at });
  for (const call of turn.invalid_tool_calls ?? []) {
    steps.push({
      type: "tool_call",
      name: call.name,
      status: "failed",
      input: { arguments: call.arguments },
      output: turn.format_feedback ?? turn.format_error ?? "",
      duration: null,
      timestamp: at,
      returncode: null,
    });
  }
  if (turn.format_error !== null) {
    steps.push({
      type: "message",
      content: turn.format_feedback ?? turn.format_error,
      timestamp: at,
      format_error: turn.format_error,
    });
  }
  for (const call of turn.tool_calls) {
    steps.push({
      type: "tool_call",
      name: call.name,
      status: call.failed ? "failed" : "completed",
      input: { command: call.command },
      output: call.exception_info
        ? `${call.output}${call.output ? "\n" : ""}${call.exception_info}`
        : call.output,
      duration: ms(call.duration_s),
      timestamp: relative(call.started_at),
      returncode: call.returncode,
    });
  }
  return steps;
}

/** The record's `metadata`: the instance, the agent and model, and what came of the run. */
function metadataOf(facts: RunFacts): Record<string, unknown> {
  return {
    instance_id: facts.instance_id,
    repo: repoOfInstance(facts.instance_id),
    agent: AGENT,
    model: facts.model,
    exit_status: facts.exit_status,
    cost: facts.cost,
    api_calls: facts.api_calls,
    steps: facts.steps,
    resolved: facts.verdict.resolved,
    verdict: facts.verdict.reason,
  };
}

/**
 * The full judge record of one run: every step untruncated, with ids `<id>-step-<n>`, timestamps in ms from
 * the run's start. `timing` is the run's start and end in Unix ms, `end - start` its wall time (the facts').
 */
export function judgeRecord(facts: RunFacts): JudgeRecord {
  const start = facts.started_at;
  const relative = (time: number | null) => (time === null || start === null ? null : ms(time - start));
  const steps = facts.turns
    .flatMap((turn) => turnSteps(turn, relative))
    .map((step, index) => ({ ...step, stepId: `${facts.id}-step-${index + 1}` }) as JudgeStep);
  const first = steps.find((step) => step.timestamp !== null)?.timestamp ?? null;
  const startMs = ms(start);
  const duration = durationMs(facts);
  return {
    id: facts.id,
    input: inputOf(facts),
    output: outputOf(facts),
    trajectory: steps,
    metadata: metadataOf(facts),
    timing: {
      start: startMs,
      end: startMs === null || duration === null ? ms(facts.ended_at) : startMs + duration,
      ...(first === null ? {} : { firstResponse: first }),
    },
    status: exportStatus(facts),
    ...(facts.error_message ? { errors: [facts.error_message] } : {}),
  };
}

/** The first `limit` characters, `...` when cut (as the harness previews thoughts, messages and the output). */
function preview(text: string, limit: number): string {
  return text.length > limit ? `${text.slice(0, limit)}...` : text;
}

/** A fenced code preview: all of it up to 12 lines, else the first 8 and the last 4 lines. */
function codePreview(code: string, language: string, indent: string): string[] {
  const lines = code.replace(/\n$/, "").split("\n");
  const shown =
    lines.length > 12
      ? [...lines.slice(0, 8), "", `// ... ${lines.length - 12} lines omitted ...`, "", ...lines.slice(-4)]
      : lines;
  const longest = Math.max(0, ...[...code.matchAll(/`+/g)].map((match) => match[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return [`${fence}${language}`, ...shown, fence].map((line) => (line ? `${indent}${line}` : ""));
}

/** `key=value, ...` as the harness writes it (every entry; a value as text, an object as JSON). */
function metadataLine(metadata: Record<string, unknown>): string {
  return Object.entries(metadata)
    .map(
      ([key, value]) =>
        `${key}=${value !== null && typeof value === "object" ? JSON.stringify(value) : String(value)}`,
    )
    .join(", ");
}

/** The markdown record of one run, in the harness's layout (ends with `---` and a blank line). */
export function judgeMarkdown(record: JudgeRecord): string {
  const lines = [
    `## Evaluation Record: ${record.id}`,
    "",
    `**Input:** ${record.input}`,
    "",
    "**Trajectory:**",
  ];
  record.trajectory.forEach((step, index) => {
    const n = index + 1;
    const ref = `[->${step.stepId}]`;
    if (step.type === "tool_call") {
      // As the harness: no duration when there is none (or it is 0 ms).
      const duration = step.duration ? ` (${step.duration}ms)` : "";
      lines.push(`${n}. [TOOL:${step.name}] -> ${step.status}${duration} ${ref}`);
      const code = "command" in step.input ? step.input.command : step.input.arguments;
      lines.push(
        ...codePreview(code, "command" in step.input ? "bash" : "json", " ".repeat(`${n}. `.length)),
      );
    } else {
      const label = step.type === "thought" ? "THOUGHT" : "MESSAGE";
      lines.push(`${n}. [${label}] ${preview(step.content, 100)} ${ref}`);
    }
  });
  const duration =
    record.timing.start === null || record.timing.end === null
      ? null
      : record.timing.end - record.timing.start;
  lines.push(
    "",
    `**Output:** ${preview(record.output, 200)}`,
    `**Metadata:** ${metadataLine(record.metadata)}`,
    `**Status:** ${record.status}`,
    `**Duration:** ${duration === null ? "unknown" : `${duration}ms`}`,
    "",
    "---",
    "",
  );
  return `${lines.join("\n")}\n`;
}
