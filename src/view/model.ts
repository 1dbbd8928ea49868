/**
 * The data a `swerun view` page holds: a compact overview (parsed at load) and one detail record per
 * instance (embedded compressed, unpacked when the instance is opened or searched). Field names are the
 * contract between the generator (`src/view/*.ts`) and the page script (`src/view/page/*.ts`,
 * which type-checks against these types).
 */

/** One row of the instance table. */
export interface InstanceRow {
  id: string;
  /** The recorded exit status; "running" for a trajectory still being written, "" when unknown. */
  exit_status: string;
  /** The evaluation verdict; null when not evaluated (or grading failed). */
  resolved: boolean | null;
  /** Why: resolved, unresolved, empty_patch, patch_failed, error, not_evaluated (see VerdictFacts). */
  verdict: string;
  /** It ended with exit status Submitted. */
  submitted: boolean;
  /** Its patch is empty (also when it did not submit). */
  empty_patch: boolean;
  steps: number;
  cost: number;
  /** Total tokens: input not read from or written to the cache, plus output (see `totalTokens` in facts). */
  tokens: number;
  wall_s: number;
  patch_lines: number;
  format_errors: number;
  timeouts: number;
  /** Index of the instance's detail record in the run's details, null when no trajectory was found. */
  detail: number | null;
}

/** A run (or a set of trajectories) as the page shows it. */
export interface ViewRun {
  name: string;
  path: string;
  /** complete, partial, running (its lock is held), or trajectories (files without a run record). */
  state: string;
  /** Instances the run was asked to do, when recorded. */
  expected: number | null;
  /** Label and value pairs, in display order. */
  settings: Array<[string, string]>;
  totals: Array<[string, string]>;
  rows: InstanceRow[];
}

/** A command the agent ran. */
export interface CallView {
  command: string;
  returncode: number | null;
  /** The output, possibly shortened for the page: `cut` characters were left out at `cut_at`. */
  output: string;
  output_chars: number;
  cut: number;
  cut_at: number;
  exception_info: string;
  timed_out: boolean;
  duration_s: number | null;
  /** The environment's own cap dropped the middle of the output ("N bytes of M"), else null. */
  env_truncated: string | null;
}

/** One model call and what came of it. */
export interface StepView {
  n: number;
  text: string | null;
  reasoning: string | null;
  finish_reason: string | null;
  prompt_tokens: number | null;
  cost: number | null;
  duration_s: number | null;
  retries: Array<{ error: string; duration_s: number | null }>;
  format_error: string | null;
  format_feedback: string | null;
  calls: CallView[];
}

/** The evaluation verdict and its evidence (the SWE-bench harness's report.json and test log). */
export interface VerdictView {
  resolved: boolean;
  report_path: string;
  tests: Record<string, { success: string[]; failure: string[] }>;
  /** Lines of the test log that name failing tests or errors (at most a screenful). */
  log_lines: string[];
  log_path: string | null;
  /** The instance's language and the log parser that read its tests (from run.json's `eval`), when known. */
  language: string | null;
  log_parser: string | null;
}

/** Everything shown when an instance is opened. */
export interface InstanceDetail {
  id: string;
  path: string;
  format: string;
  model: string | null;
  problem: string | null;
  exit_status: string;
  error_message: string | null;
  submission: string;
  steps: StepView[];
  verdict: VerdictView | null;
}

/** Per instance, both runs' sides, flips first. */
export interface CompareRow {
  id: string;
  /** Row index in each run, null when the instance is only in the other run. */
  a: number | null;
  b: number | null;
  flip: "gained" | "lost" | null;
  flip_kind: "resolved" | "submitted" | null;
}

export interface ViewCompare {
  rows: CompareRow[];
  config_changes: Array<{ field: string; old: string; new: string }>;
}

/** The page's overview data. */
export interface ViewPage {
  format: "swerun-view-1";
  title: string;
  generated_at: string;
  swerun_version: string;
  mode: "run" | "trajectories" | "compare";
  runs: ViewRun[];
  compare: ViewCompare | null;
}
