import type { SwerunConfig } from "../config/schema.js";
import { factsWithoutTrajectory, readRunFacts } from "../facts/read-run.js";
import type { RecordedTiming, RunFacts } from "../facts/run-facts.js";
import type { DatasetSelection, RunCase, RunRecord } from "../formats/run-json.js";
import { caseFromFacts } from "../tracking/case.js";
import { casesCost, caseTotals } from "../tracking/metrics.js";
import { agentSnapshot } from "../tracking/snapshot.js";
import { swerunVersion } from "../util/package-root.js";
import { withoutSecrets } from "../util/sanitize.js";

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
