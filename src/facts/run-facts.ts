import type { VerdictReason } from "../formats/run-json.js";
import { normalizeUsage } from "../models/cost.js";

/**
 * The facts of a run: one set, computed once, that every output reads (run.json cases, `swerun runs`, the
 * view, reports, exports, the console summary, the event stream's end totals). Nothing else recomputes
 * them. `null` always means "the source does not record this" (older formats, mini-swe-agent), never zero.
 *
 * Facts of a step (`TurnFacts`, one per model call that returned a reply):
 * - `turn`: its number (1-based); `timestamp` (when the reply arrived), `started_at` (when the call began),
 *   `duration_s` (model time of the successful attempt; retried attempts are in `retries`);
 * - `cost` (USD, of this call), `tokens` (prompt, completion, cache read/write, uncached input; see `TokenFacts`),
 *   `prompt_tokens` (= `tokens.prompt`), `finish_reason`;
 * - `retries`: each failed attempt before the reply, with its error, duration and the wait after it;
 * - `format_error` / `format_feedback`: the reply could not be run, why, and what the model was told;
 * - `tool_calls`: each command that ran, with its program name, start, duration, return code, output,
 *   exception, whether it timed out and whether it failed (`ToolCallFacts`).
 *
 * Facts of an instance (`RunFacts`, one trajectory):
 * - `started_at`, `ended_at`, `wall_time_s`: as the batch measured them (from before the instance's
 *   environment started to after it was torn down, recorded in the trajectory's `info.swerun_timing`), else
 *   from the first to the last time the trajectory records (`timing` says which);
 * - `steps` (model calls that returned a reply), `api_calls` (model calls begun, as mini-swe-agent's
 *   `info.model_stats` counts them: a call whose every attempt failed counts), `attempts` (HTTP requests to the
 *   model, failed ones included), `cost`, `tokens` (summed over the steps), `tool_calls`, `read_calls`,
 *   `failed_tool_calls`, `format_errors`, `timeouts`, `retries`;
 * - `exit_status`, `submitted` (it ended Submitted), `submission`, `empty_patch` (its patch is empty: also true
 *   for a run that submitted nothing), `error_message`;
 * - `verdict`: resolved, unresolved, empty_patch, patch_failed, error or not_evaluated (`VerdictFacts`);
 * - what it ran with: `model`, `model_class`, `model_kwargs`, `agent_config`, `task`, `prompt`.
 *
 * Facts of a run (`RunTotals`, over its instances): instances, submitted, exit statuses, verdict counts,
 * steps, api calls, cost, tokens, tool calls, reads, failed tool calls, format errors, timeouts, retries and
 * the sum of the instances' wall times; the run's config is its run.json's `config`.
 *
 * Where they are computed: `read-run.ts` (a trajectory's step and instance facts), `verdict.ts` (verdicts from
 * a run folder's records), `folder-facts.ts` (an instance with its verdict; a folder's instances and totals),
 * `run-totals.ts` (a run's totals). The batch records an instance's timing (src/batch/instance.ts).
 */

/**
 * Token counts of a model call, or summed over calls. `input`, `cache_read`, `cache_write` and `completion`
 * (output) add up to everything the call counted; `prompt` is the first three. Every output that shows
 * "input tokens" shows `input`, and every output that shows "total tokens" shows `totalTokens` of these.
 */
export interface TokenFacts {
  /** Prompt tokens as the provider counts them (cache reads and writes included): the context sent. */
  prompt: number;
  /** Output tokens. */
  completion: number;
  /** Prompt tokens read from the provider's cache. */
  cache_read: number;
  /** Prompt tokens written to the provider's cache. */
  cache_write: number;
  /** Prompt tokens neither read from nor written to the cache (Anthropic's `input_tokens`). */
  input: number;
}

/** One command the agent ran. Times are Unix seconds. */
export interface ToolCallFacts {
  command: string;
  /** The command's program (see `commandProgram`). */
  name: string;
  returncode: number | null;
  /** The raw output; for formats that record only the rendered observation, that text. */
  output: string;
  exception_info: string;
  /** The command ran out of time (exit code -1 with a timeout exception). */
  timed_out: boolean;
  duration_s: number | null;
  /** When it started (its end minus its duration), else when its output was recorded. */
  started_at: number | null;
  /** The command did not succeed: it timed out, exited non-zero, or could not be run. */
  failed: boolean;
}

/** A model request attempt that failed and was retried. */
export interface RetryFacts {
  error: string;
  duration_s: number | null;
  /** The wait before the next attempt, when recorded. */
  delay_s: number | null;
}

/** One model call that returned a reply (a turn), with what came of it. */
export interface TurnFacts {
  /** 1-based, counting replies. */
  turn: number;
  /** The reply's text; null for formats that record no assistant message for a format error. */
  content: string | null;
  /** Reasoning the provider returned (`reasoning_content`), else null. */
  reasoning: string | null;
  finish_reason: string | null;
  prompt_tokens: number | null;
  /** The call's token counts; null when the trajectory records no usage for it. */
  tokens: TokenFacts | null;
  /** The call's cost in USD (`extra.cost` of the reply, or of the feedback to a format error). */
  cost: number | null;
  duration_s: number | null;
  /** When the reply arrived. */
  timestamp: number | null;
  /** When the (successful) call began: the reply's time minus its duration. */
  started_at: number | null;
  /** Failed attempts before this reply (swerun's `extra.retries`); empty when none or not recorded. */
  retries: RetryFacts[];
  /** The reply could not be run: the error (or the feedback, for formats that record only that). */
  format_error: string | null;
  /** The feedback the model got for the format error. */
  format_feedback: string | null;
  tool_calls: ToolCallFacts[];
  /** Tool calls the reply asked for whose arguments were not valid JSON (the format error's cause); absent when none. */
  invalid_tool_calls?: Array<{ id: string | null; name: string; arguments: string }>;
  /** How many tool calls the reply carried (its `tool_calls`); absent for a reply without (text-based models). */
  requested_tool_calls?: number;
}

/** An instance's evaluation verdict. */
export interface VerdictFacts {
  /** true: resolved; false: graded and not resolved (unresolved, empty_patch, patch_failed); null: no verdict. */
  resolved: boolean | null;
  reason: VerdictReason;
  /** What went wrong grading it (patch_failed, error), else null. */
  error: string | null;
  /** When the verdict was recorded (ISO 8601), null when unknown. */
  graded_at: string | null;
}

/** An instance that was not (or not yet) graded. */
export const NOT_EVALUATED: VerdictFacts = Object.freeze({
  resolved: null,
  reason: "not_evaluated",
  error: null,
  graded_at: null,
}) as VerdictFacts;

/** Where an instance's start, end and wall time come from. */
export type TimingSource = "batch" | "messages";

/** A whole run of one instance (one trajectory). */
export interface RunFacts {
  /** The instance id, else the file name without `.traj.json`. */
  id: string;
  path: string;
  /** The trajectory format the facts were read from. */
  format: string;
  instance_id: string | null;
  /** The raw task (swerun's `info.task`); null when the file does not record it. */
  task: string | null;
  /** The first user message (the rendered task prompt). */
  prompt: string | null;
  model: string | null;
  model_class: string | null;
  model_kwargs: Record<string, unknown> | null;
  agent_config: Record<string, unknown> | null;
  /** "" when the run has not ended (or crashed before recording one). */
  exit_status: string;
  /** It ended with exit status Submitted (whatever its patch). */
  submitted: boolean;
  submission: string;
  /** Its patch (the submission) is empty or blank: the harness grades it as an empty patch. */
  empty_patch: boolean;
  /** The error of a run that ended with one (exception text), else null. */
  error_message: string | null;
  cost: number | null;
  /** Model calls begun, as the trajectory's `info.model_stats.api_calls` counts them (null when it does not). */
  api_calls: number | null;
  /**
   * HTTP requests to the model, failed ones included: each step's successful request, its retried attempts,
   * the failed attempts of a last call that never got a reply, and calls counted but not recorded (cut short).
   */
  attempts: number;
  /** Unix seconds; see `timing`. */
  started_at: number | null;
  ended_at: number | null;
  /** `ended_at - started_at` as recorded (the batch's own measure when `timing` is "batch"). */
  wall_time_s: number | null;
  /** "batch": measured by the batch around the whole instance; "messages": the trajectory's first to last time. */
  timing: TimingSource | null;
  /** Model calls that returned a reply (= `turns.length`). */
  steps: number;
  /** Summed over the turns that record usage. */
  tokens: TokenFacts;
  /** Commands run (= the turns' `tool_calls`), those that only read (see `isReadOnlyCommand`), those that failed. */
  tool_calls: number;
  read_calls: number;
  failed_tool_calls: number;
  format_errors: number;
  timeouts: number;
  /** Failed model request attempts that were retried. */
  retries: number;
  verdict: VerdictFacts;
  turns: TurnFacts[];
  /** The exit code recorded with an error's exit message (see `exitCodeOf`); absent when none was recorded. */
  exit_code?: number;
  /** Failed attempts of the last model call, which never returned a reply (its retries ran out); absent when none. */
  unanswered_attempts?: RetryFacts[];
  /** The model config as recorded (`info.config.model`), for what only the model's description knows (its context window). */
  model_config?: Record<string, unknown>;
}

/** The facts of a run of several instances, summed. */
export interface RunTotals {
  instances: number;
  /** Instances that ended with exit status Submitted. */
  submitted: number;
  /** Instances whose patch is empty (see `RunFacts.empty_patch`). */
  empty_patches: number;
  /** Instances per exit status. */
  exit_statuses: Record<string, number>;
  /** Instances per verdict reason (every reason present, 0 when none). */
  verdicts: Record<VerdictReason, number>;
  /** Instances with a verdict (resolved true or false). */
  graded: number;
  resolved: number;
  steps: number;
  api_calls: number;
  attempts: number;
  /** Summed at full precision (round only when printing). */
  cost: number;
  tokens: TokenFacts;
  tool_calls: number;
  read_calls: number;
  failed_tool_calls: number;
  format_errors: number;
  timeouts: number;
  retries: number;
  /** Sum of the instances' wall times (not the run's elapsed time: instances run in parallel). */
  wall_time_s: number;
}

/** The trajectory `info` key a batch records an instance's timing under (mini-swe-agent does not use it). */
export const TIMING_INFO_KEY = "swerun_timing";

/** What a batch records in `info.swerun_timing`: Unix seconds and the wall time between them. */
export interface RecordedTiming {
  started_at: number;
  ended_at: number;
  wall_time_s: number;
}

/** Exit statuses that are ordinary ends of a run; any other non-empty status is an error's class name. */
export const ORDINARY_EXIT_STATUSES = new Set([
  "Submitted",
  "LimitsExceeded",
  "TimeExceeded",
  "RepeatedFormatError",
  "UserInterruption",
  "Interrupted",
]);

/** The GitHub repository of a SWE-bench instance id (`owner__name-123` → `owner/name`), else null. */
export function repoOfInstance(id: string | null): string | null {
  const match = id ? /^(.+?)__(.+)-\d+$/.exec(id) : null;
  return match ? `${match[1]}/${match[2]}` : null;
}

export const NO_TOKENS: TokenFacts = Object.freeze({
  prompt: 0,
  completion: 0,
  cache_read: 0,
  cache_write: 0,
  input: 0,
}) as TokenFacts;

/**
 * The token counts of one call from its recorded usage in any provider's shape (see `normalizeUsage`); null
 * when it records none. Every reader of a call's usage (the facts, the event stream) counts it here.
 */
export function callTokens(usage: unknown): TokenFacts | null {
  const counted = normalizeUsage(usage);
  if (!counted) return null;
  return {
    prompt: counted.prompt_tokens,
    completion: counted.completion_tokens,
    cache_read: counted.cache_read_tokens,
    cache_write: counted.cache_write_tokens,
    input: Math.max(0, counted.prompt_tokens - counted.cache_read_tokens - counted.cache_write_tokens),
  };
}

/**
 * Total tokens, the one figure every output that says "tokens" shows (sniffbench's `totalTokens`, the events'
 * `total_tokens`, `runs`, the view, the console): input not read from or written to the cache, plus output.
 */
export function totalTokens(tokens: TokenFacts): number {
  return tokens.input + tokens.completion;
}

/** The sum of token counts. */
export function addTokens(a: TokenFacts, b: TokenFacts | null): TokenFacts {
  if (!b) return a;
  return {
    prompt: a.prompt + b.prompt,
    completion: a.completion + b.completion,
    cache_read: a.cache_read + b.cache_read,
    cache_write: a.cache_write + b.cache_write,
    input: a.input + b.input,
  };
}
