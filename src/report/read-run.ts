import { basename } from "node:path";
import { SUBMIT_MARKER } from "../agent/submission.js";
import { isPlainObject } from "../config/merge.js";
import type { Message } from "../messages.js";
import { type LoadedTrajectory, loadTrajectory } from "../replay/load.js";
import { type RecordedStep, recordedObservation, recordedRun } from "../replay/recorded.js";
import { commandProgram } from "./command-name.js";
import {
  ORDINARY_EXIT_STATUSES,
  type RetryFacts,
  type RunFacts,
  type ToolCallFacts,
  type TurnFacts,
} from "./run-facts.js";

/** swerun's and mini-swe-agent 2.x's default action regex (text-based models). */
const DEFAULT_ACTION_REGEX = "```mswea_bash_command\\s*\\n(.*?)\\n```";

type Dict = Record<string, unknown>;
const dict = (value: unknown): Dict => (isPlainObject(value) ? value : {});
const str = (value: unknown): string | null => (typeof value === "string" ? value : null);
const num = (value: unknown): number | null =>
  typeof value === "number" && Number.isFinite(value) ? value : null;

/** A message's text: a string as it is, a list of content parts as their text joined. */
function textOf(content: unknown): string | null {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return null;
  return content
    .map((part) => str(dict(part).text))
    .filter((text): text is string => text !== null)
    .join("\n");
}

/** The id a run is listed under: the recorded instance id, else the file name without its suffix. */
function idOf(path: string, instanceId: string | null): string {
  return instanceId ?? basename(path).replace(/\.traj\.json(?:\.partial)?$|\.json$/, "");
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

/**
 * The commands of a step that ran. `submission`: the step ended the run with this submission; the command
 * that submitted, if it has no observation, printed the marker and the submission with exit code 0.
 */
function toolCalls(step: RecordedStep, submission: string | undefined): ToolCallFacts[] {
  const messages = step.actions.map((action, index) =>
    action.tool_call_id ? step.after.find((m) => m.tool_call_id === action.tool_call_id) : step.after[index],
  );
  const submitter = submission === undefined ? -1 : submitterOf(step, messages);
  const calls: ToolCallFacts[] = [];
  step.actions.forEach((action, index) => {
    const message = messages[index];
    if (index === submitter) {
      calls.push({
        command: action.command,
        name: commandProgram(action.command),
        returncode: 0,
        output: `${SUBMIT_MARKER}\n${submission}`,
        exception_info: "",
        timed_out: false,
        duration_s: null,
        started_at: null,
      });
      return;
    }
    const observation = message ? recordedObservation(message) : undefined;
    if (!message || !observation) return;
    const extra = dict(message.extra);
    const duration = num(extra.duration_s);
    const ended = num(extra.timestamp);
    calls.push({
      command: action.command,
      name: commandProgram(action.command),
      returncode: observation.returncode,
      output: observation.output,
      exception_info: observation.exception_info,
      timed_out: isTimeout(extra, observation.returncode, observation.exception_info),
      duration_s: duration,
      started_at: ended === null ? null : duration === null ? ended : ended - duration,
    });
  });
  return calls;
}

function retriesOf(extra: Dict): RetryFacts[] {
  if (!Array.isArray(extra.retries)) return [];
  return extra.retries.map((retry) => ({
    error: str(dict(retry).error) ?? "",
    duration_s: num(dict(retry).duration_s),
  }));
}

function turnOf(step: RecordedStep, submission: string | undefined): TurnFacts {
  const assistant: Message | undefined = step.assistant;
  // mini-swe-agent 2.x (and swerun) record a reply that could not be run only in its feedback's `extra`.
  const paid = assistant ?? (step.kind === "format_error" ? step.after[0] : undefined);
  const extra = dict(paid?.extra);
  const response = dict(extra.response);
  const choice = dict(Array.isArray(response.choices) ? response.choices[0] : undefined);
  const reply = dict(choice.message);
  const usage = isPlainObject(extra.usage) ? extra.usage : dict(response.usage);
  const feedback =
    step.kind === "format_error" ? step.after.map((m) => textOf(m.content)).find(Boolean) : null;
  return {
    turn: step.step,
    content: assistant
      ? (textOf(assistant.content) ?? "")
      : (str(extra.model_response) ?? (paid ? textOf(reply.content) : null)),
    reasoning: assistant
      ? (str(assistant.reasoning_content) ?? str(assistant.reasoning) ?? null)
      : (str(reply.reasoning_content) ?? null),
    finish_reason: str(choice.finish_reason),
    prompt_tokens: num(usage.prompt_tokens),
    duration_s: num(extra.duration_s),
    timestamp: num(extra.timestamp),
    retries: retriesOf(extra),
    format_error:
      step.kind === "format_error"
        ? (str(extra.format_error) ?? feedback ?? "the reply could not be run")
        : null,
    format_feedback: feedback ?? null,
    tool_calls: step.kind === "actions" ? toolCalls(step, submission) : [],
  };
}

/** Every recorded timestamp, and each model call's start (its reply's time minus its duration). */
function timeBounds(messages: Message[]): { start: number | null; end: number | null } {
  let start: number | null = null;
  let end: number | null = null;
  for (const message of messages) {
    const extra = dict(message.extra);
    const time = num(extra.timestamp);
    if (time === null) continue;
    const began = time - (num(extra.duration_s) ?? 0);
    start = start === null ? began : Math.min(start, began);
    end = end === null ? time : Math.max(end, time);
  }
  return { start, end };
}

/** The facts of an already loaded trajectory. */
export function runFactsOf(trajectory: LoadedTrajectory): RunFacts {
  const run = recordedRun(trajectory, DEFAULT_ACTION_REGEX);
  const info = trajectory.info;
  const config = dict(info.config);
  const model = isPlainObject(config.model) ? config.model : null;
  const stats = dict(info.model_stats);
  const instanceId = str(trajectory.extras.instance_id) ?? str(info.instance_id);
  const exitExtra = dict(run.exit?.extra);
  const status = run.exitStatus;
  const failed = status !== "" && !ORDINARY_EXIT_STATUSES.has(status);
  const firstUser = [...run.prefix, ...trajectory.messages].find((m) => m.role === "user");
  const { start, end } = timeBounds(trajectory.messages);
  return {
    id: idOf(trajectory.path, instanceId),
    path: trajectory.path,
    format: trajectory.kind,
    instance_id: instanceId,
    task: str(info.task),
    prompt: firstUser ? textOf(firstUser.content) : null,
    model: model ? str(model.model_name) : null,
    model_class: model ? str(model.model_class) : null,
    model_kwargs: model && isPlainObject(model.model_kwargs) ? model.model_kwargs : null,
    agent_config: isPlainObject(config.agent) ? config.agent : null,
    exit_status: status,
    submission: run.submission ?? "",
    error_message: failed ? (str(exitExtra.exception_str) ?? textOf(run.exit?.content) ?? status) : null,
    cost: num(stats.instance_cost),
    api_calls: num(stats.api_calls),
    started_at: start,
    ended_at: end,
    turns: run.steps.map((step, index) =>
      turnOf(
        step,
        index === run.steps.length - 1 && status === "Submitted" ? (run.submission ?? "") : undefined,
      ),
    ),
  };
}

/** Reads one trajectory file (any format `swerun replay` reads) into run facts; a bad file is a UserError. */
export function readRunFacts(path: string): RunFacts {
  return runFactsOf(loadTrajectory(path));
}
