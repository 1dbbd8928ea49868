import { type RunFacts, repoOfInstance } from "./run-facts.js";
import { type ExportStatus, exportStatus } from "./status.js";
import { inputOf, outputOf } from "./summary.js";

/** A step of the `judge` export (the harness's `TrajectoryStep`, plus swerun's `format_error`). */
type StepBody =
  | { type: "thought"; content: string; timestamp: number | null }
  | { type: "message"; content: string; timestamp: number | null }
  | { type: "format_error"; content: string; timestamp: number | null }
  | {
      type: "tool_call";
      name: string;
      status: "completed" | "failed";
      input: { command: string };
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

const ms = (seconds: number | null) => (seconds === null ? null : Math.round(seconds * 1000));

/** The full judge record of one run: every step untruncated, with ids `<id>-step-<n>`. */
export function judgeRecord(facts: RunFacts, resolved?: boolean): JudgeRecord {
  const start = facts.started_at;
  const relative = (time: number | null) => (time === null || start === null ? null : ms(time - start));
  const steps: JudgeStep[] = [];
  const add = (step: StepBody) =>
    steps.push({ ...step, stepId: `${facts.id}-step-${steps.length + 1}` } as JudgeStep);
  for (const turn of facts.turns) {
    const at = relative(turn.timestamp);
    if (turn.reasoning) add({ type: "thought", content: turn.reasoning, timestamp: at });
    if (turn.content?.trim()) add({ type: "message", content: turn.content, timestamp: at });
    if (turn.format_error !== null) {
      add({ type: "format_error", content: turn.format_feedback ?? turn.format_error, timestamp: at });
    }
    for (const call of turn.tool_calls) {
      const ok = !call.timed_out && (call.returncode === null ? !call.exception_info : call.returncode === 0);
      add({
        type: "tool_call",
        name: call.name,
        status: ok ? "completed" : "failed",
        input: { command: call.command },
        output: call.exception_info
          ? `${call.output}${call.output ? "\n" : ""}${call.exception_info}`
          : call.output,
        duration: ms(call.duration_s),
        timestamp: relative(call.started_at),
        returncode: call.returncode,
      });
    }
  }
  const first = relative(facts.turns[0]?.timestamp ?? null);
  const status = exportStatus(facts, resolved);
  return {
    id: facts.id,
    input: inputOf(facts),
    output: outputOf(facts),
    trajectory: steps,
    metadata: {
      instance_id: facts.instance_id,
      repo: repoOfInstance(facts.instance_id),
      model: facts.model,
      exit_status: facts.exit_status,
      cost: facts.cost === null ? null : Math.round(facts.cost * 1e10) / 1e10,
      api_calls: facts.api_calls,
      steps: facts.turns.length,
      ...(resolved === undefined ? {} : { resolved }),
    },
    timing: {
      start: ms(start),
      end: ms(facts.ended_at),
      ...(first === null ? {} : { firstResponse: first }),
    },
    status,
    ...(facts.error_message ? { errors: [facts.error_message] } : {}),
  };
}

/** The first `limit` characters, `...` when cut; whitespace runs become one space so a list item stays one line. */
function preview(text: string, limit: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > limit ? `${flat.slice(0, limit)}...` : flat;
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

function metadataLine(metadata: Record<string, unknown>): string {
  return Object.entries(metadata)
    .filter(([, value]) => value !== null && value !== undefined && value !== "")
    .map(([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
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
      const duration = step.duration === null ? "" : ` (${step.duration}ms)`;
      lines.push(`${n}. [TOOL:${step.name}] -> ${step.status}${duration} ${ref}`);
      lines.push(...codePreview(step.input.command, "bash", " ".repeat(`${n}. `.length)));
    } else {
      const label =
        step.type === "thought" ? "THOUGHT" : step.type === "message" ? "MESSAGE" : "FORMAT_ERROR";
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
