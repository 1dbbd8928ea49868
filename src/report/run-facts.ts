/**
 * What reports and exports know about one run, whatever it was read from. Trajectories fill it today
 * (`readRunFacts`); the live event stream can fill the same shape step by step. `null` always means "the
 * source does not record this" (older formats, mini-swe-agent), never zero.
 */

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
}

/** A model request attempt that failed and was retried. */
export interface RetryFacts {
  error: string;
  duration_s: number | null;
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
  duration_s: number | null;
  /** When the reply arrived. */
  timestamp: number | null;
  /** Failed attempts before this reply (swerun's `extra.retries`); empty when none or not recorded. */
  retries: RetryFacts[];
  /** The reply could not be run: the error (or the feedback, for formats that record only that). */
  format_error: string | null;
  /** The feedback the model got for the format error. */
  format_feedback: string | null;
  tool_calls: ToolCallFacts[];
}

/** A whole run. */
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
  submission: string;
  /** The error of a run that ended with one (exception text), else null. */
  error_message: string | null;
  cost: number | null;
  api_calls: number | null;
  started_at: number | null;
  ended_at: number | null;
  turns: TurnFacts[];
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
