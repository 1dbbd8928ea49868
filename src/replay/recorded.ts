import { SUBMIT_MARKER } from "../agent/submission.js";
import { isPlainObject } from "../config/merge.js";
import type { Action, AssistantMessage, ExitMessage, Message } from "../messages.js";
import { recordedExitStatus } from "../trajectory/format.js";
import type { LoadedTrajectory } from "../trajectory/reader.js";

/** mini-swe-agent's submission marker before 1.x; replayed trajectories may still use it. */
export const LEGACY_SUBMIT_MARKER = "MINI_SWE_AGENT_FINAL_OUTPUT";
/** mini-swe-agent 1.x and older parsed ```bash blocks. */
export const LEGACY_ACTION_REGEX = "```bash\\s*\\n(.*?)\\n```";
/** What tool-call models answer for tool calls that did not run (the run stopped first). */
const NOT_EXECUTED = "action was not executed";

/** What the recorded run saw for one action. */
export interface RecordedObservation {
  /** The exit code; null when the trajectory does not record it. */
  returncode: number | null;
  /** The raw output; with `rendered`, the whole observation message as the model saw it. */
  output: string;
  exception_info: string;
  /** Only the rendered observation is recorded (older formats, long outputs): compare it with the new one. */
  rendered: boolean;
}

/**
 * One model call of the recorded run. `actions` ran and were observed; `format_error` and `rejected`
 * turns ran nothing, and the replay adds their recorded messages as they are.
 */
export interface RecordedStep {
  /** 1-based, counting model calls. */
  step: number;
  kind: "actions" | "format_error" | "rejected";
  /** Messages recorded between the previous step and this model call (interruption notes, user messages). */
  before: Message[];
  /** The assistant message; absent for mini-swe-agent 2.x format errors, which record only the feedback. */
  assistant?: AssistantMessage;
  actions: Action[];
  /** Per action; undefined when the action did not run (or the trajectory has no observation for it). */
  observations: Array<RecordedObservation | undefined>;
  /** The messages recorded after the model call: observations, format-error feedback, rejections. */
  after: Message[];
  /** The recording kept no observation of this step (mini-swe-agent's default agent, when a command submitted). */
  unobserved?: boolean;
}

export interface RecordedRun {
  /** The messages before the first model call (system prompt, task). */
  prefix: Message[];
  steps: RecordedStep[];
  /** Non-exit messages after the last step's observations. */
  trailing: Message[];
  /** The exit message; absent when the run crashed before writing one. Older formats get one synthesized. */
  exit?: ExitMessage;
  exitStatus: string;
  /** The recorded submission; undefined when the trajectory records none (no `info.submission`, no exit message). */
  submission: string | undefined;
  /** Tool-call actions (answered with `role: "tool"`) or text actions. */
  style: "toolcall" | "text";
}

const extraOf = (message: Message): Record<string, unknown> =>
  isPlainObject(message.extra) ? message.extra : {};
const interruptType = (message: Message) => extraOf(message).interrupt_type;
const text = (message: Message) => (typeof message.content === "string" ? message.content : "");

function isAction(value: unknown): value is Action {
  return isPlainObject(value) && typeof value.command === "string";
}

/** The actions of a recorded assistant message: `extra.actions`, else its tool calls, else the regex on its text. */
export function recordedActions(
  assistant: AssistantMessage,
  actionRegex: string,
  recordsActions = false,
): Action[] | undefined {
  const recorded = extraOf(assistant).actions;
  if (Array.isArray(recorded))
    return recorded.every(isAction) ? recorded.map((action) => ({ ...action })) : undefined;
  // mini-swe-agent 2.x records every model's actions; a message without them ran nothing (a scripted output).
  if (recordsActions) return [];
  if (Array.isArray(assistant.tool_calls) && assistant.tool_calls.length > 0) {
    const actions: Action[] = [];
    for (const call of assistant.tool_calls) {
      const fn = isPlainObject(call) && isPlainObject(call.function) ? call.function : {};
      let args: unknown = fn.arguments;
      try {
        if (typeof args === "string") args = JSON.parse(args);
      } catch {
        return undefined;
      }
      if (fn.name !== "bash" || !isPlainObject(args) || typeof args.command !== "string") return undefined;
      const id = isPlainObject(call) && typeof call.id === "string" ? call.id : undefined;
      actions.push({ command: args.command, ...(id ? { tool_call_id: id } : {}) });
    }
    return actions;
  }
  const matches = [...text(assistant).matchAll(new RegExp(actionRegex, "gs"))].map((m) =>
    (m[1] ?? m[0]).trim(),
  );
  return matches.length === 1 ? matches.map((command) => ({ command })) : undefined;
}

/** The output an observation message records: `extra.raw_output`, else parsed from mini-swe-agent's template. */
export function recordedObservation(message: Message): RecordedObservation | undefined {
  const extra = extraOf(message);
  const returncode = typeof extra.returncode === "number" ? extra.returncode : null;
  const exceptionInfo = typeof extra.exception_info === "string" ? extra.exception_info : "";
  if (typeof extra.raw_output === "string") {
    if (exceptionInfo === NOT_EXECUTED && extra.raw_output === "") return undefined;
    return { returncode, output: extra.raw_output, exception_info: exceptionInfo, rendered: false };
  }
  const content = text(message);
  const code = /<returncode>(-?\d+)<\/returncode>/.exec(content);
  const output = /<output>\n?([\s\S]*)<\/output>\s*$/.exec(content);
  const exception = /<exception>([\s\S]*?)<\/exception>/.exec(content);
  return {
    returncode: returncode ?? (code ? Number(code[1]) : null),
    output: output ? (output[1] ?? "") : content,
    exception_info: exceptionInfo || (exception?.[1] ?? ""),
    rendered: !output,
  };
}

/** The regex for text actions of a trajectory that does not record them. */
function actionRegexFor(
  trajectory: LoadedTrajectory,
  configured: string | undefined,
  fallback: string,
): string {
  if (configured) return configured;
  const config = isPlainObject(trajectory.info.config) ? trajectory.info.config : {};
  for (const section of [config.model, config.agent]) {
    if (isPlainObject(section) && typeof section.action_regex === "string") return section.action_regex;
  }
  const mswea = trajectory.messages.some(
    (m) => m.role === "assistant" && text(m).includes("```mswea_bash_command"),
  );
  return mswea || trajectory.kind === "mini-swe-agent-1.1" ? fallback : LEGACY_ACTION_REGEX;
}

function newStep(
  assistant: AssistantMessage | undefined,
  before: Message[],
  actionRegex: string,
  recordsActions: boolean,
): RecordedStep {
  const actions = assistant ? recordedActions(assistant, actionRegex, recordsActions) : undefined;
  const formatError =
    !assistant ||
    !actions ||
    (actions.length === 0 && !recordsActions) ||
    extraOf(assistant).format_error !== undefined;
  return {
    step: 0,
    kind: formatError ? "format_error" : "actions",
    before,
    ...(assistant ? { assistant } : {}),
    actions: formatError ? [] : (actions ?? []),
    observations: [],
    after: [],
  };
}

/** Whether `message` belongs to `step` (its observations or its feedback) rather than to what comes next. */
function accepts(step: RecordedStep, message: Message): boolean {
  const type = interruptType(message);
  if (step.kind === "format_error") {
    if (type === "FormatError")
      return Boolean(step.assistant) && step.after.every((m) => interruptType(m) === "FormatError");
    return (
      Boolean(step.assistant) && step.after.length === 0 && type === undefined && message.role === "user"
    );
  }
  if (step.after.length >= step.actions.length) return false;
  return type === undefined || type === "UserRejection";
}

/** The recorded submission: `info.submission`, else the exit message's; undefined when neither records one. */
function submissionOf(trajectory: LoadedTrajectory, exit: ExitMessage | undefined): string | undefined {
  if (typeof trajectory.info.submission === "string") return trajectory.info.submission;
  return exit?.extra.submission;
}

/**
 * Older formats end a submitted run with a user message holding the submission instead of the submit
 * command's observation; it becomes the exit message, and the observation is the marker plus the submission.
 */
function synthesizeLegacyExit(run: RecordedRun): void {
  const last = run.steps.at(-1);
  const message = last?.after.at(-1);
  if (
    !last ||
    !message ||
    last.kind !== "actions" ||
    run.trailing.length > 0 ||
    extraOf(message).raw_output !== undefined
  )
    return;
  const command = last.actions.at(-1)?.command ?? "";
  const marker = [SUBMIT_MARKER, LEGACY_SUBMIT_MARKER].find((candidate) => command.includes(candidate));
  if (!marker) return;
  const submission = text(message);
  last.observations[last.observations.length - 1] = {
    returncode: null,
    output: `${marker}\n${submission}`,
    exception_info: "",
    rendered: false,
  };
  run.exit = { role: "exit", content: submission, extra: { exit_status: "Submitted", submission } };
  run.exitStatus = "Submitted";
  run.submission ||= submission;
}

/**
 * Older swerun trajectories keep a malformed reply as an assistant message with no actions, then the feedback:
 * whether `message` is that feedback, right after such a reply.
 */
function isLegacyFormatFeedback(
  current: RecordedStep | undefined,
  pending: Message[],
  message: Message,
): boolean {
  return (
    current?.kind === "actions" &&
    current.assistant !== undefined &&
    current.actions.length === 0 &&
    current.after.length === 0 &&
    pending.length === 0 &&
    interruptType(message) === "FormatError"
  );
}

/**
 * Reads the messages up to the exit message into `run`: the prefix before the first step, the steps (each
 * model call with what followed it) and the exit message. Returns the messages left after the last step.
 */
function collectSteps(
  messages: Message[],
  regex: string,
  recordsActions: boolean,
  run: RecordedRun,
): Message[] {
  let pending: Message[] = [];
  let current: RecordedStep | undefined;
  for (const message of messages) {
    if (message.role === "exit") {
      run.exit = message;
      break;
    }
    if (message.role === "assistant") {
      current = newStep(message, pending, regex, recordsActions);
    } else if (current && isLegacyFormatFeedback(current, pending, message)) {
      current.kind = "format_error";
      current.after.push(message);
      continue;
    } else if (interruptType(message) === "FormatError" && !(current && accepts(current, message))) {
      current = newStep(undefined, pending, regex, recordsActions);
      current.after.push(message);
    } else if (!current) {
      run.prefix.push(message);
      continue;
    } else if (pending.length === 0 && accepts(current, message)) {
      current.after.push(message);
      continue;
    } else {
      pending.push(message);
      continue;
    }
    pending = [];
    current.step = run.steps.length + 1;
    run.steps.push(current);
  }
  return pending;
}

/** Marks rejected steps, and gives each action step's actions their observations (by tool call id, else in order). */
function attachObservations(steps: RecordedStep[]): void {
  for (const step of steps) {
    if (step.after.some((message) => interruptType(message) === "UserRejection")) step.kind = "rejected";
    if (step.kind !== "actions") continue;
    step.observations = step.actions.map((action, index) => {
      const message = action.tool_call_id
        ? step.after.find((m) => m.tool_call_id === action.tool_call_id)
        : step.after[index];
      return message ? recordedObservation(message) : undefined;
    });
  }
}

/**
 * Splits a trajectory into its steps: each model call with the actions it asked for and what they
 * printed. `actionRegex` (the config's, when the user set one) parses text actions that are not recorded.
 */
export function recordedRun(
  trajectory: LoadedTrajectory,
  actionRegex: string,
  configuredRegex?: string,
): RecordedRun {
  const regex = actionRegexFor(trajectory, configuredRegex, actionRegex);
  const run: RecordedRun = {
    prefix: [],
    steps: [],
    trailing: [],
    exitStatus: "",
    submission: undefined,
    style: "text",
  };
  const recordsActions = trajectory.kind === "mini-swe-agent-1.1";
  run.trailing = collectSteps(trajectory.messages, regex, recordsActions, run);
  attachObservations(run.steps);
  if (run.steps.some((step) => step.actions.some((action) => action.tool_call_id))) run.style = "toolcall";
  run.exitStatus = run.exit ? run.exit.extra.exit_status : recordedExitStatus(trajectory.info);
  // mini-swe-agent's default agent keeps no observation of the step whose command submitted.
  const last = run.steps.at(-1);
  if (last?.kind === "actions" && run.exitStatus === "Submitted" && last.after.length === 0) {
    last.unobserved = true;
  }
  run.submission = submissionOf(trajectory, run.exit);
  if (!run.exit && trajectory.kind !== "mini-swe-agent-1.1") synthesizeLegacyExit(run);
  return run;
}
