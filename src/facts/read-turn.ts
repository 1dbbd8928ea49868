// One recorded step of a trajectory read as the facts of a turn: its reply, its commands, their outcomes.
import { SUBMIT_MARKER } from "../agent/submission.js";
import { isPlainObject } from "../config/merge.js";
import type { Message } from "../messages.js";
import { type RecordedStep, recordedObservation } from "../replay/recorded.js";
import { commandProgram } from "./command-name.js";
import {
  callTokens,
  type RetryFacts,
  type TokenFacts,
  type ToolCallFacts,
  type TurnFacts,
} from "./run-facts.js";

export type Dict = Record<string, unknown>;
export const dict = (value: unknown): Dict => (isPlainObject(value) ? value : {});
export const str = (value: unknown): string | null => (typeof value === "string" ? value : null);
export const num = (value: unknown): number | null =>
  typeof value === "number" && Number.isFinite(value) ? value : null;

/** A message's text: a string as it is, a list of content parts as their text joined. */
export function textOf(content: unknown): string | null {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return null;
  return content
    .map((part) => str(dict(part).text))
    .filter((text): text is string => text !== null)
    .join("\n");
}

function isTimeout(extra: Dict, returncode: number | null, exceptionInfo: string): boolean {
  const type = str(extra.exception_type) ?? "";
  if (type === "TimeoutError" || type === "TimeoutExpired") return true;
  return (returncode === -1 || returncode === null) && /timed out|timeout/i.test(exceptionInfo);
}

/**
 * Which action of a run's last step submitted, when it has no observation (mini-swe-agent records none, or
 * "not executed" for a tool call; its default agent records none for the whole step): the unobserved one whose command prints the marker,
 * else the first unobserved one when what ran before it was observed; -1 when that cannot be told.
 */
function submitterOf(step: RecordedStep, messages: Array<Message | undefined>): number {
  const ran = (message: Message | undefined) => message !== undefined && recordedObservation(message);
  const missing = step.actions.flatMap((_, index) => (ran(messages[index]) ? [] : [index]));
  const marked = missing.find((index) => step.actions[index]?.command.includes(SUBMIT_MARKER));
  if (marked !== undefined) return marked;
  if (!step.unobserved) return missing[0] ?? -1;
  return step.actions.length === 1 ? 0 : -1;
}

/** How the run ended with a submission: the submission, and the command that made it as the exit message records it. */
export interface SubmitEnd {
  submission: string;
  /** The exit message's `submit_action` (swerun records it; mini-swe-agent does not). */
  action: Dict;
}

/**
 * The commands of a step that ran. `submitted`: the step ended the run with this submission; the command
 * that submitted, if it has no observation, printed the marker and the submission with exit code 0, and ran
 * for as long as the exit message records (see `SUBMIT_ACTION_KEY`).
 */
function toolCalls(step: RecordedStep, submitted: SubmitEnd | undefined): ToolCallFacts[] {
  const messages = step.actions.map((action, index) =>
    action.tool_call_id ? step.after.find((m) => m.tool_call_id === action.tool_call_id) : step.after[index],
  );
  const submitter = submitted === undefined ? -1 : submitterOf(step, messages);
  const calls: ToolCallFacts[] = [];
  step.actions.forEach((action, index) => {
    const message = messages[index];
    if (index === submitter && submitted) {
      const duration = num(submitted.action.duration_s);
      const ended = num(submitted.action.timestamp);
      calls.push({
        command: action.command,
        name: commandProgram(action.command),
        returncode: num(submitted.action.returncode) ?? 0,
        output: `${SUBMIT_MARKER}\n${submitted.submission}`,
        exception_info: "",
        timed_out: false,
        duration_s: duration,
        started_at: ended === null ? null : ended - (duration ?? 0),
        failed: false,
      });
      return;
    }
    const observation = message ? recordedObservation(message) : undefined;
    if (!message || !observation) return;
    const extra = dict(message.extra);
    const duration = num(extra.duration_s);
    const ended = num(extra.timestamp);
    const timedOut = isTimeout(extra, observation.returncode, observation.exception_info);
    calls.push({
      command: action.command,
      name: commandProgram(action.command),
      returncode: observation.returncode,
      output: observation.output,
      exception_info: observation.exception_info,
      timed_out: timedOut,
      duration_s: duration,
      started_at: ended === null ? null : duration === null ? ended : ended - duration,
      failed:
        timedOut ||
        (observation.returncode === null ? observation.exception_info !== "" : observation.returncode !== 0),
    });
  });
  return calls;
}

export function retriesOf(extra: Dict): RetryFacts[] {
  if (!Array.isArray(extra.retries)) return [];
  return extra.retries.map((retry) => ({
    error: str(dict(retry).error) ?? "",
    duration_s: num(dict(retry).duration_s),
    delay_s: num(dict(retry).delay_s),
  }));
}

/** A call's token counts from its recorded usage (`extra.usage`, else the raw response's). */
function tokensOf(extra: Dict): TokenFacts | null {
  return callTokens(extra.usage ?? dict(extra.response).usage);
}

export function turnOf(step: RecordedStep, submitted: SubmitEnd | undefined, next?: RecordedStep): TurnFacts {
  const assistant: Message | undefined = step.assistant;
  // mini-swe-agent 2.x (and swerun) record a reply that could not be run only in its feedback's `extra`.
  const paid = assistant ?? (step.kind === "format_error" ? step.after[0] : undefined);
  const extra = dict(paid?.extra);
  const response = dict(extra.response);
  const choice = dict(Array.isArray(response.choices) ? response.choices[0] : undefined);
  const reply = dict(choice.message);
  const usage = isPlainObject(extra.usage) ? extra.usage : dict(response.usage);
  // Older formats (mini-swe-agent 1.x) keep a reply without a command as it is, then the feedback, unmarked.
  const unmarked =
    step.kind === "actions" &&
    step.actions.length === 0 &&
    next !== undefined &&
    !step.after.some((m) => recordedObservation(m));
  const formatError = step.kind === "format_error" || unmarked;
  const feedback = formatError
    ? [...step.after, ...(unmarked ? (next?.before ?? []) : [])].map((m) => textOf(m.content)).find(Boolean)
    : null;
  const tokens = tokensOf(extra);
  const timestamp = num(extra.timestamp);
  const duration = num(extra.duration_s);
  return {
    turn: step.step,
    content: assistant
      ? (textOf(assistant.content) ?? "")
      : (str(extra.model_response) ?? (paid ? textOf(reply.content) : null)),
    reasoning: assistant
      ? (str(assistant.reasoning_content) ?? str(assistant.reasoning) ?? null)
      : (str(reply.reasoning_content) ?? null),
    finish_reason: str(choice.finish_reason),
    prompt_tokens: tokens ? tokens.prompt : num(usage.prompt_tokens),
    tokens,
    cost: num(extra.cost),
    duration_s: duration,
    timestamp,
    started_at: timestamp === null ? null : timestamp - (duration ?? 0),
    retries: retriesOf(extra),
    format_error: formatError ? (str(extra.format_error) ?? feedback ?? "the reply could not be run") : null,
    format_feedback: feedback ?? null,
    tool_calls: step.kind === "actions" ? toolCalls(step, submitted) : [],
    ...invalidToolCalls(step.kind === "format_error" ? reply.tool_calls : undefined),
    ...requestedToolCalls(assistant?.tool_calls ?? reply.tool_calls),
  };
}

/** `{requested_tool_calls}` when the reply carried tool calls, else nothing. */
function requestedToolCalls(calls: unknown): Pick<TurnFacts, "requested_tool_calls"> {
  return Array.isArray(calls) && calls.length > 0 ? { requested_tool_calls: calls.length } : {};
}

/** The tool calls of a reply whose arguments do not parse as JSON (`{invalid_tool_calls}`, or nothing). */
function invalidToolCalls(calls: unknown): Pick<TurnFacts, "invalid_tool_calls"> {
  if (!Array.isArray(calls)) return {};
  const invalid: NonNullable<TurnFacts["invalid_tool_calls"]> = [];
  for (const call of calls) {
    const fn = dict(dict(call).function);
    const args = typeof fn.arguments === "string" ? fn.arguments : "";
    try {
      JSON.parse(args);
    } catch {
      invalid.push({ id: str(dict(call).id), name: str(fn.name) ?? "", arguments: args });
    }
  }
  return invalid.length > 0 ? { invalid_tool_calls: invalid } : {};
}
