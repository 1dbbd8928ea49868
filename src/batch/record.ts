import { existsSync, readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import type { SwerunConfig } from "../config/schema.js";
import { factsWithoutTrajectory, readRunFacts } from "../facts/read-run.js";
import type { RecordedTiming, RunFacts } from "../facts/run-facts.js";
import type { ImagesRecord } from "../images/pool.js";
import { CASE_VERDICT_KEYS, caseFromFacts, type RunCase } from "../tracking/case.js";
import { type BehaviorMetrics, casesCost, caseTotals } from "../tracking/metrics.js";
import { type AgentSnapshot, agentSnapshot, type DatasetSelection } from "../tracking/snapshot.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { swerunVersion } from "../util/package-root.js";
import { withoutSecrets } from "../util/sanitize.js";
import { redactedJson } from "../util/secrets.js";

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
  /** The images a Docker batch pulled, pulled ahead, waited for and removed (image-pool.ts). */
  images?: ImagesRecord;
}

export interface RecordStart {
  runId: string;
  label?: string;
  modelName: string;
  config: SwerunConfig;
  imageTemplate: string | null;
  instances: number;
  dataset: DatasetSelection;
  /** The run.json an earlier process left in the folder: its id, label and start are kept. */
  previous?: Partial<RunRecord>;
}

/** A new record (status running), or the continuation of the folder's earlier one. */
export function newRunRecord(start: RecordStart): RunRecord {
  const { previous, config } = start;
  const runId = previous?.run_id ?? start.runId;
  const startedAt = previous?.started_at ?? new Date().toISOString();
  return {
    id: runId,
    run_id: runId,
    label: start.label ?? previous?.label ?? null,
    createdAt: startedAt,
    status: "running",
    started_at: startedAt,
    ended_at: null,
    swerun_version: swerunVersion(),
    model: start.modelName,
    subset: start.dataset.subset,
    split: start.dataset.split,
    instances: start.instances,
    exit_statuses: {},
    total_cost: 0,
    config: withoutSecrets({ ...config, model: { ...config.model, outputs: undefined } }),
    agent: agentSnapshot(config, start.imageTemplate),
    dataset: start.dataset,
    cases: {},
    totals: caseTotals([]),
  };
}

/** Recomputes the record's totals from its cases (exit-status counts when `countStatuses`). */
export function updateTotals(record: RunRecord, countStatuses: boolean): void {
  const all = Object.values(record.cases);
  if (countStatuses) {
    const counts: Record<string, number> = {};
    for (const c of all) counts[c.exit_status] = (counts[c.exit_status] ?? 0) + 1;
    record.exit_statuses = counts;
  }
  record.totals = caseTotals(all);
  record.total_cost = casesCost(all);
}

/** The run.json a previous process left in the folder, if it reads as an object. */
export function readRunRecord(path: string): Partial<RunRecord> | undefined {
  try {
    const record = JSON.parse(readFileSync(path, "utf8"));
    return typeof record === "object" && record !== null && !Array.isArray(record) ? record : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An instance's facts once it has ended, read from its trajectory (the status alone when it left none), with
 * the exit status the batch recorded for it, and its cost and timing when the trajectory records none.
 */
export function instanceFacts(
  trajectoryFile: string,
  status: string,
  cost?: number,
  timing?: RecordedTiming,
): RunFacts {
  let facts: RunFacts;
  try {
    facts = readRunFacts(trajectoryFile);
  } catch {
    // no trajectory (an instance that failed before it wrote one): the facts are the status alone
    facts = factsWithoutTrajectory(trajectoryFile, { exit_status: status, error: null });
  }
  facts.exit_status = status;
  facts.submitted = status === "Submitted";
  if (cost !== undefined && !facts.cost) facts.cost = cost;
  if (timing && facts.wall_time_s === null) {
    Object.assign(facts, {
      started_at: timing.started_at,
      ended_at: timing.ended_at,
      wall_time_s: timing.wall_time_s,
      timing: "batch",
    });
  }
  return facts;
}

/**
 * The facts of an instance whose trajectory could not be saved: there is no file of its own to read (the
 * folder may hold an earlier run's), so its status, error, cost and timing are those its run returned.
 */
export function unsavedFacts(
  trajectoryFile: string,
  id: string,
  status: string,
  error: string,
  cost: number,
  timing: RecordedTiming,
): RunFacts {
  const facts = factsWithoutTrajectory(trajectoryFile, { id, exit_status: status, error });
  facts.cost = cost;
  Object.assign(facts, {
    started_at: timing.started_at,
    ended_at: timing.ended_at,
    wall_time_s: timing.wall_time_s,
    timing: "batch",
  });
  return facts;
}

/** An instance's case, read from its facts once it has ended (see `instanceFacts`). */
export function caseOf(trajectoryFile: string, status: string, cost?: number): RunCase {
  return caseFromFacts(instanceFacts(trajectoryFile, status, cost));
}

/** A case as JSON keeps it, without its verdict. */
const withoutVerdict = (c: RunCase): unknown =>
  JSON.parse(
    JSON.stringify({ ...c, ...Object.fromEntries(CASE_VERDICT_KEYS.map((key) => [key, undefined])) }),
  );

/**
 * Writes run.json atomically, secrets redacted (the config has its credential keys removed already). What
 * grading recorded in the file is kept: its `eval` key, and each case's `resolved` while the case is the
 * one that was graded (an instance run again gets a new case, without the old verdict).
 */
export function writeRunRecord(path: string, record: RunRecord): void {
  let onDisk: { eval?: unknown; cases?: Record<string, RunCase> } = {};
  try {
    if (existsSync(path)) onDisk = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    onDisk = {};
  }
  for (const [id, current] of Object.entries(record.cases)) {
    const graded = onDisk.cases?.[id];
    if (current.resolved !== undefined || current.verdict !== undefined || !graded) continue;
    if (typeof graded.resolved !== "boolean" && graded.verdict === undefined) continue;
    if (isDeepStrictEqual(withoutVerdict(graded), withoutVerdict(current)))
      for (const key of CASE_VERDICT_KEYS)
        if (graded[key] !== undefined) Object.assign(current, { [key]: graded[key] });
  }
  writeFileAtomic(path, [
    redactedJson(onDisk.eval === undefined ? record : { ...record, eval: onDisk.eval }),
  ]);
}
