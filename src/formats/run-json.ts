import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { UserError } from "../errors.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { fileWriteError } from "../util/file-error.js";
import { withFileLock } from "../util/file-lock.js";
import { isPlainObject } from "../util/plain-object.js";
import { printableLine } from "../util/printable.js";
import { redactedJson } from "../util/secrets.js";

/**
 * run.json, the record of a run in its folder: its type, reading it, writing it, and the locked
 * read-modify-write every writer goes through (a batch, `swebench-single`, grading, `swerun runs label`).
 * What fills it is built elsewhere (batch/record.ts, eval/verdict-record.ts).
 */

/** The file's name in a run folder. */
export const RUN_JSON = "run.json";

/** The run.json of the run folder `dir`. */
export const runJsonPath = (dir: string): string => join(dir, RUN_JSON);

/**
 * run.json: what a batch run was (id, label, config, model) and how it went (counts, cost, times): a
 * sniffbench run (`id`, `label`, `createdAt`, `agent`, `cases`) plus swerun's keys.
 */
export interface RunRecord {
  /** sniffbench's run id (= `run_id`). */
  id: string;
  run_id: string;
  label: string | null;
  /** sniffbench's creation time (= `started_at`). */
  createdAt: string;
  status: "running" | "finished" | "interrupted";
  started_at: string;
  ended_at: string | null;
  swerun_version: string;
  model: string;
  subset: string;
  split: string;
  instances: number;
  exit_statuses: Record<string, number>;
  /** The cases' costs summed, unrounded (the one run cost every output prints). */
  total_cost: number;
  /** The resolved config, with credentials removed. */
  config: Record<string, unknown>;
  /** What the run was configured with, for `swerun runs compare`. */
  agent: AgentSnapshot;
  /** How the instances were selected. */
  dataset: DatasetSelection;
  /** One entry per instance that has ended, filled as each ends. */
  cases: Record<string, RunCase>;
  /** Behaviour metrics summed over `cases`. */
  totals: BehaviorMetrics;
  /** The Docker hosts of a batch across several (no credentials: addresses only), and how each was last seen. */
  hosts?: Array<{ host: string; workers: number; state: "up" | "down" }>;
  /** The images a Docker batch pulled, pulled ahead, waited for and removed (images/pool.ts). */
  images?: ImagesRecord;
}

/** Why an instance has the verdict it has. */
export type VerdictReason =
  | "resolved"
  | "unresolved"
  | "empty_patch"
  | "patch_failed"
  | "error"
  | "not_evaluated";

/**
 * sniffbench's behaviour metrics of one case (one instance), read from its facts (src/facts/run-facts.ts),
 * plus what matters for SWE-bench. A tool call is a command the agent ran. Tokens follow Anthropic's
 * counting, as sniffbench: `inputTokens` are prompt tokens neither read from nor written to the cache,
 * `totalTokens` = input + output, `cacheHitRatio` = cache reads / (input + cache reads). Ratios and averages
 * are computed as sniffbench's `computeBehaviorMetrics` does: over max(toolCount, 1), a command without a
 * recorded duration counting 0 ms.
 */
export interface BehaviorMetrics {
  totalTokens: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Commands the agent ran. */
  toolCount: number;
  /** Of those, commands that only read (see `isReadOnlyCommand`). */
  readCount: number;
  costUsd: number;
  explorationRatio: number;
  cacheHitRatio: number;
  avgToolDurationMs: number;
  tokensPerTool: number;
  tokensPerRead: number;
  /** swerun's: the commands' durations summed (ms), so totals can average over every command. */
  toolDurationMs: number;
  steps: number;
  formatErrors: number;
  timeouts: number;
  /** The instance's wall time (see `RunFacts.wall_time_s`). */
  wallTimeSeconds: number;
  patchLines: number;
}

/**
 * One instance of a run as `run.json` records it when the instance ends: sniffbench's case (`answer`,
 * `grade`, `gradedAt`, `gradedBy`, `behaviorMetrics`) plus swerun's facts of it.
 */
export interface RunCase {
  /** The agent's answer: its submission (the patch). */
  answer: string;
  /** 10 when resolved, 0 when graded and not resolved (sniffbench's 1-10 grade, out of 10); absent until graded. */
  grade?: number;
  /** When the verdict was recorded (ISO 8601). */
  gradedAt?: string;
  /** `swebench`: the SWE-bench harness's grading. */
  gradedBy?: string;
  behaviorMetrics: BehaviorMetrics;
  exit_status: string;
  /** It ended with exit status Submitted (whatever its patch; see `RunFacts.submitted`). */
  submitted: boolean;
  /** Its patch is empty (see `RunFacts.empty_patch`); absent in cases recorded before it existed. */
  empty_patch?: boolean;
  patch_lines: number;
  /** The evaluation verdict; absent until the instance is graded. */
  resolved?: boolean;
  /** Why: resolved, unresolved, empty_patch, patch_failed, error; absent until graded. */
  verdict?: VerdictReason;
  steps: number;
  cost: number;
  /** The instance's wall time, as the batch measured it (see `RunFacts.wall_time_s`), rounded to ms. */
  duration_s: number;
  /** The Docker host the instance ran on, in a batch across several (`--docker-host`). */
  host?: string;
}

/** The keys of a case that grading writes (see `caseVerdict`). */
export const CASE_VERDICT_KEYS = ["resolved", "verdict", "grade", "gradedAt", "gradedBy"] as const;

/** What a run was configured with, compact enough to compare two runs field by field (sniffbench's agent snapshot). */
export interface AgentSnapshot {
  name: "swerun";
  version: string;
  model: string;
  model_class: string;
  /** sha256 of each prompt template's source (as sniffbench hashes CLAUDE.md): a prompt edit changes it. */
  template_sha256: Record<string, string>;
  /** sha256 of the whole resolved config (credentials removed, keys sorted). */
  config_sha256: string;
  step_limit: number;
  cost_limit: number;
  wall_time_limit_seconds: number;
  environment_class: string;
  image_template: string | null;
  exec_mode: string | null;
}

/** Which instances a batch was asked to run. */
export interface DatasetSelection {
  subset: string;
  split: string;
  slice: string | null;
  filter: string | null;
  instance_ids: string | null;
  shuffle: boolean;
  shard?: string | null;
}

/** run.json's `images`: what the batch pulled, pulled ahead, waited for and removed (`host` with a host pool). */
export interface ImagesRecord {
  /** The budget per Docker daemon in bytes; null: every pulled image is kept. */
  budget_bytes: number | null;
  pulled: Array<{ image: string; host?: string; bytes: number }>;
  pulled_ahead: Array<{ image: string; host?: string }>;
  /** Instances whose agent waited for its image, and how long (seconds). */
  waited: Array<{ image: string; host?: string; seconds: number }>;
  removed: Array<{ image: string; host?: string }>;
  /** The most disk the batch's pulled images (and pulls under way) took on one daemon at once. */
  peak_bytes: number;
}

/** How one instance's grading ended. `error`: no report.json (patch did not apply, timeout, failure). */
export type GradeStatus = "resolved" | "unresolved" | "empty_patch" | "error";

/** One instance's verdict, as run.json's `eval.instances` keeps it. */
export interface RunJsonVerdict {
  resolved: boolean;
  status: GradeStatus;
  error?: string;
  /** The grading could not be done (GradeResult.infra_failure): not a verdict, graded again next time. */
  infra_failure?: string;
  /** The row's log parser and the instance's language (for the view). */
  log_parser?: string;
  language?: string;
}

/** What `swerun eval` adds to a run folder's run.json: its own `eval` key, nothing else touched. */
export interface RunJsonEval {
  run_id: string;
  /** The run report, relative to the run folder. */
  report?: string;
  updated_at: string;
  resolved: number;
  graded: number;
  instances: Record<string, RunJsonVerdict>;
}

/** A run.json object as read from disk: unchecked, so each reader checks the fields it uses. */
export type RunJsonObject = Record<string, unknown>;

/** A run.json as it is on disk: absent, there but not a JSON object (why, in one line), or read. */
export type RunJsonOnDisk =
  | { state: "absent" }
  | { state: "unreadable"; problem: string }
  | { state: "read"; record: RunJsonObject };

/** Reads the run.json at `path`; never throws (a torn or foreign file is `unreadable`, with the reason). */
export function readRunJson(path: string): RunJsonOnDisk {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { state: "absent" };
    return { state: "unreadable", problem: printableLine((error as Error).message) };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { state: "unreadable", problem: printableLine((error as Error).message) };
  }
  if (isPlainObject(value)) return { state: "read", record: value };
  const kind = value === null ? "null" : Array.isArray(value) ? "list" : typeof value;
  return { state: "unreadable", problem: `a JSON ${kind}, not an object` };
}

/** The run.json object at `path`, or undefined when there is none or it cannot be read. */
export function runJsonAt(path: string): RunJsonObject | undefined {
  const onDisk = readRunJson(path);
  return onDisk.state === "read" ? onDisk.record : undefined;
}

/**
 * The object of the run.json at `path` (`onDisk`: as already read), undefined when there is none; one that
 * cannot be read is a UserError naming it, in one line.
 */
export function readableRunJson(
  path: string,
  onDisk: RunJsonOnDisk = readRunJson(path),
): RunJsonObject | undefined {
  if (onDisk.state === "unreadable")
    throw new UserError(`${path}: not a readable run.json (${onDisk.problem})`);
  return onDisk.state === "read" ? onDisk.record : undefined;
}

/** The run.json a previous process left in the folder, if it reads as an object. */
export function readRunRecord(path: string): Partial<RunRecord> | undefined {
  return runJsonAt(path) as Partial<RunRecord> | undefined;
}

/**
 * Updates the run.json at `path` under its lock (`.run.json.lock` next to it), so that processes updating
 * it at once (a batch, its grading, `swerun eval`, `swerun runs label`) each see the others' changes:
 * `change` gets the file as it is now and returns the object to write (atomically, secrets redacted), or
 * undefined to leave it. A write that fails (a full disk, a read-only folder) is a FileWriteError naming
 * `path`; what `change` throws comes out as it is.
 */
export function updateRunJson(path: string, change: (onDisk: RunJsonOnDisk) => object | undefined): void {
  const lock = join(dirname(path), `.${basename(path)}.lock`);
  let locked = false;
  try {
    withFileLock(lock, () => {
      locked = true;
      const next = change(readRunJson(path));
      if (next !== undefined) writeFileAtomic(path, [redactedJson(next)]);
    });
  } catch (error) {
    if (locked || error instanceof UserError || (error as NodeJS.ErrnoException).code === undefined)
      throw error;
    throw fileWriteError(path, error);
  }
}

/** A case as JSON keeps it, without its verdict. */
const withoutVerdict = (c: RunCase): unknown =>
  JSON.parse(
    JSON.stringify({ ...c, ...Object.fromEntries(CASE_VERDICT_KEYS.map((key) => [key, undefined])) }),
  );

/**
 * Writes a batch's (or a single run's) record: what grading recorded in the file is kept, its `eval` key,
 * and each case's verdict while the case is the one that was graded (an instance run again gets a new case,
 * without the old verdict). A run.json that cannot be read is replaced.
 */
export function writeRunRecord(path: string, record: RunRecord): void {
  updateRunJson(path, (onDisk) => {
    const before = onDisk.state === "read" ? onDisk.record : {};
    const graded = isPlainObject(before.cases) ? (before.cases as Record<string, RunCase>) : {};
    for (const [id, current] of Object.entries(record.cases)) {
      const earlier = graded[id];
      if (current.resolved !== undefined || current.verdict !== undefined || !isPlainObject(earlier))
        continue;
      if (typeof earlier.resolved !== "boolean" && earlier.verdict === undefined) continue;
      if (isDeepStrictEqual(withoutVerdict(earlier), withoutVerdict(current)))
        for (const key of CASE_VERDICT_KEYS)
          if (earlier[key] !== undefined) Object.assign(current, { [key]: earlier[key] });
    }
    return before.eval === undefined ? record : { ...record, eval: before.eval };
  });
}
