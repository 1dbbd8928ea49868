import { basename } from "node:path";
import { SUBMIT_ACTION_KEY } from "../agent/submission.js";
import { isPlainObject } from "../config/merge.js";
import type { Message } from "../messages.js";
import { recordedRun } from "../replay/recorded.js";
import { type LoadedTrajectory, loadTrajectory } from "../trajectory/reader.js";
import { isReadOnlyCommand } from "./command-name.js";
import { type Dict, dict, num, retriesOf, type SubmitEnd, str, textOf, turnOf } from "./read-turn.js";
import {
  addTokens,
  NO_TOKENS,
  NOT_EVALUATED,
  ORDINARY_EXIT_STATUSES,
  type RunFacts,
  TIMING_INFO_KEY,
  type TimingSource,
  type TurnFacts,
  type VerdictFacts,
} from "./run-facts.js";

/** swerun's and mini-swe-agent 2.x's default action regex (text-based models). */
const DEFAULT_ACTION_REGEX = "```mswea_bash_command\\s*\\n(.*?)\\n```";

/** The id a run is listed under: the recorded instance id, else the file name without its suffix. */
function idOf(path: string, instanceId: string | null): string {
  return instanceId ?? basename(path).replace(/\.traj\.json(?:\.partial)?$|\.json$/, "");
}

/**
 * Every recorded timestamp, and each model call's start (its reply's time minus its duration); the
 * command that submitted counts with the time the exit message records for it.
 */
function timeBounds(messages: Message[]): { start: number | null; end: number | null } {
  let start: number | null = null;
  let end: number | null = null;
  const timed = messages.flatMap((message) => {
    const extra = dict(message.extra);
    return message.role === "exit" ? [extra, dict(extra[SUBMIT_ACTION_KEY])] : [extra];
  });
  for (const extra of timed) {
    const time = num(extra.timestamp);
    if (time === null) continue;
    const began = time - (num(extra.duration_s) ?? 0);
    start = start === null ? began : Math.min(start, began);
    end = end === null ? time : Math.max(end, time);
  }
  return { start, end };
}

/** The instance's start, end and wall time as the batch recorded them (`info.swerun_timing`), if it did. */
function recordedTiming(info: Dict): { start: number; end: number; wall: number } | undefined {
  const timing = dict(info[TIMING_INFO_KEY]);
  const start = num(timing.started_at);
  const end = num(timing.ended_at);
  const wall = num(timing.wall_time_s);
  return start === null || end === null || wall === null ? undefined : { start, end, wall };
}

/**
 * HTTP requests to the model: one per step (the request that got its reply), its retried attempts, the
 * failed attempts of a last call that never got a reply, and the calls `api_calls` counts that left nothing
 * to read (a call cut short by an interruption: one request each).
 */
function attemptsOf(steps: number, retries: number, unanswered: number, apiCalls: number | null): number {
  const unrecorded = Math.max(0, (apiCalls ?? 0) - steps - (unanswered > 0 ? 1 : 0));
  return steps + retries + unanswered + unrecorded;
}

/** Where a run starts and ends: as the batch (or `swerun run`) recorded it, else its first to last recorded time. */
function timingOf(
  trajectory: LoadedTrajectory,
): Pick<RunFacts, "started_at" | "ended_at" | "wall_time_s" | "timing"> {
  const batch = recordedTiming(trajectory.info);
  if (batch)
    return { started_at: batch.start, ended_at: batch.end, wall_time_s: batch.wall, timing: "batch" };
  const { start, end } = timeBounds(trajectory.messages);
  const timing: TimingSource | null = start !== null ? "messages" : null;
  const wall = start !== null && end !== null ? end - start : null;
  return { started_at: start, ended_at: end, wall_time_s: wall, timing };
}

type Counts = Pick<
  RunFacts,
  | "steps"
  | "tokens"
  | "tool_calls"
  | "read_calls"
  | "failed_tool_calls"
  | "format_errors"
  | "timeouts"
  | "retries"
>;

/** What a run's turns add up to: steps, tokens, commands (read-only, failed, timed out), format errors, retries. */
function countsOf(turns: TurnFacts[]): Counts {
  const calls = turns.flatMap((turn) => turn.tool_calls);
  return {
    steps: turns.length,
    tokens: turns.reduce((sum, turn) => addTokens(sum, turn.tokens), NO_TOKENS),
    tool_calls: calls.length,
    read_calls: calls.filter((call) => isReadOnlyCommand(call.command)).length,
    failed_tool_calls: calls.filter((call) => call.failed).length,
    format_errors: turns.filter((turn) => turn.format_error !== null).length,
    timeouts: calls.filter((call) => call.timed_out).length,
    retries: turns.reduce((sum, turn) => sum + turn.retries.length, 0),
  };
}

/** What the facts of a trajectory are read with: its verdict, when the caller knows it. */
export interface FactsOptions {
  verdict?: VerdictFacts;
}

/** The facts of an already loaded trajectory. */
export function runFactsOf(trajectory: LoadedTrajectory, options: FactsOptions = {}): RunFacts {
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
  const submitted: SubmitEnd | undefined =
    status === "Submitted"
      ? { submission: run.submission ?? "", action: dict(exitExtra[SUBMIT_ACTION_KEY]) }
      : undefined;
  const turns = run.steps.map((step, index) =>
    turnOf(step, index === run.steps.length - 1 ? submitted : undefined, run.steps[index + 1]),
  );
  const apiCalls = num(stats.api_calls);
  const unanswered = Array.isArray(exitExtra.retries) ? retriesOf(exitExtra) : undefined;
  const counts = countsOf(turns);
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
    submitted: status === "Submitted",
    submission: run.submission ?? "",
    empty_patch: (run.submission ?? "").trim() === "",
    error_message: failed ? (str(exitExtra.exception_str) ?? textOf(run.exit?.content) ?? status) : null,
    cost: num(stats.instance_cost),
    api_calls: apiCalls,
    attempts: attemptsOf(turns.length, counts.retries, unanswered?.length ?? 0, apiCalls),
    ...timingOf(trajectory),
    ...counts,
    verdict: options.verdict ?? NOT_EVALUATED,
    turns,
    ...(typeof exitExtra.exit_code === "number" ? { exit_code: exitExtra.exit_code } : {}),
    ...(unanswered ? { unanswered_attempts: unanswered } : {}),
    ...(model ? { model_config: model } : {}),
  };
}

/** Reads one trajectory file (any format `swerun replay` reads) into run facts; a bad file is a UserError. */
export function readRunFacts(path: string, options: FactsOptions = {}): RunFacts {
  return runFactsOf(loadTrajectory(path), options);
}

/** The facts of a run that left no trajectory (it failed before its agent started): its status and error alone. */
export function factsWithoutTrajectory(
  path: string,
  known: {
    id?: string;
    task?: string | null;
    model?: string | null;
    exit_status: string;
    error: string | null;
  },
): RunFacts {
  return {
    id: known.id ?? path,
    path,
    format: "none",
    instance_id: known.id ?? null,
    task: known.task ?? null,
    prompt: null,
    model: known.model ?? null,
    model_class: null,
    model_kwargs: null,
    agent_config: null,
    exit_status: known.exit_status,
    submitted: known.exit_status === "Submitted",
    submission: "",
    empty_patch: true,
    error_message: known.error,
    cost: null,
    api_calls: null,
    attempts: 0,
    started_at: null,
    ended_at: null,
    wall_time_s: null,
    timing: null,
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
}
