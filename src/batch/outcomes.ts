import { join } from "node:path";
import { stringify as toYaml } from "yaml";
import { modelDisplayName } from "../config/model.js";
import { figuresLine } from "../facts/figures.js";
import { type RunCase, type RunRecord, runJsonPath, writeRunRecord } from "../formats/run-json.js";
import type { HostPool } from "../images/host-pool.js";
import { caseFromFacts } from "../tracking/case.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { chaosPoint } from "../util/chaos.js";
import { timestampSlug } from "../util/ids.js";
import { redact } from "../util/secrets.js";
import type { BatchOptions, BatchSummary } from "./batch-options.js";
import { FINISHED_STATUSES, type InstanceResult, recordedOutcome, trajectoryPath } from "./instance.js";
import { noteStatus, type OpenedBatch } from "./open.js";
import { caseOf, instanceFacts, newRunRecord, unsavedFacts, updateTotals } from "./record.js";
import type { Job } from "./scheduler.js";
import { BatchSwarms } from "./swarms.js";

/** An instance whose agent is done, as `BatchOutcomes`' `ended`, `unsaved` and `lost` take it. */
export interface EndedInstance {
  job: Job;
  number: number;
  result: InstanceResult;
  swarm: ReturnType<BatchSwarms["instance"]>;
  startedAt: number;
}

/**
 * What the instances of a batch leave as they end, and the record of it: preds.json, run.json (each
 * instance's status and case, the images and hosts), the event streams (`swarms`), the log and the display,
 * and the exit_statuses_*.yaml written when the batch closes. Outputs that cannot be written go through the
 * batch's `guard` (said once; no new instance starts).
 */
export class BatchOutcomes {
  /** The batch's event streams (`--events`). */
  readonly swarms: BatchSwarms;
  /** Instances whose run could not be saved (`unsaved`). */
  readonly unsavedRuns: NonNullable<BatchSummary["unsaved"]> = [];
  readonly #options: BatchOptions;
  readonly #opened: OpenedBatch;
  readonly #record: RunRecord;
  /** Earlier cases read from their trajectories (run.json had none with the same status), read once. */
  readonly #readCases = new Map<string, RunCase>();
  readonly #modelName: string;

  constructor(options: BatchOptions, opened: OpenedBatch) {
    this.#options = options;
    this.#opened = opened;
    this.#modelName = modelDisplayName(options.config.model);
    this.#record = newRunRecord({
      runId: options.runId,
      label: options.label,
      modelName: this.#modelName,
      config: options.config,
      imageTemplate: options.imageTemplate ?? null,
      instances: options.instances.length,
      dataset: {
        subset: options.subset,
        split: options.split,
        slice: null,
        filter: null,
        instance_ids: null,
        shuffle: false,
        ...options.dataset,
      },
      previous: opened.previous,
    });
    this.swarms = new BatchSwarms(options.eventStreams, this.runId, options.label ?? options.subset);
  }

  /** A resumed batch keeps its run id: its containers carry it, so a later resume or `cleanup --run-id` finds them. */
  get runId(): string {
    return this.#record.run_id;
  }

  /** The cost of the instances run so far (run.json's total). */
  get cost(): number {
    return this.#record.total_cost;
  }

  /** Skipped instances to the event streams; those that finished before keep their case in run.json. */
  finishedBefore(): void {
    const options = this.#options;
    const opened = this.#opened;
    const queued = new Set(opened.queue);
    for (const instance of options.instances) {
      if (!queued.has(instance))
        this.swarms.skipped(instance.instance_id, opened.results.get(instance.instance_id)?.exit_status);
    }
    // One recorded nowhere is read from its trajectory.
    for (const [status, ids] of opened.statuses) {
      for (const id of ids) {
        const earlier = opened.previous?.cases?.[id];
        this.#record.cases[id] =
          earlier && earlier.exit_status === status
            ? earlier
            : caseOf(trajectoryPath(options.outputDir, id), status);
      }
    }
  }

  /** Writes run.json as it stands. */
  save(): void {
    const record = this.#record;
    if (this.#opened.images) record.images = this.#opened.images.record;
    record.exit_statuses = Object.fromEntries(
      [...this.#opened.statuses].map(([status, ids]) => [status, ids.length]),
    );
    updateTotals(record, false);
    if (this.#opened.pool) record.hosts = hostRecord(this.#opened.pool);
    const path = runJsonPath(this.#options.outputDir);
    const written = this.#withUntouchedCases(record);
    this.#opened.guard(path, () => writeRunRecord(path, written));
  }

  /**
   * The record as run.json holds it while instances queued to run again have not ended: each keeps the case of
   * its earlier finished trajectory until it ends (a full disk may refuse every later write of run.json).
   */
  #withUntouchedCases(record: RunRecord): RunRecord {
    const missing = this.#untouched().filter(([id]) => !record.cases[id]);
    if (missing.length === 0) return record;
    const written = { ...record, cases: { ...record.cases } };
    for (const [id, status] of missing) written.cases[id] = this.#earlierCase(id, status);
    updateTotals(written, false);
    return written;
  }

  /** Instances of the batch not recorded in this run whose folder holds a finished trajectory, with its status. */
  #untouched(): Array<[string, string]> {
    const recorded = new Set([...this.#opened.statuses.values()].flat());
    const found: Array<[string, string]> = [];
    for (const { instance_id: id } of this.#options.instances) {
      const earlier = this.#opened.results.get(id)?.exit_status;
      if (!recorded.has(id) && earlier && FINISHED_STATUSES.has(earlier)) found.push([id, earlier]);
    }
    return found;
  }

  /** An instance's earlier case: as run.json had it (same status), else read from its trajectory once. */
  #earlierCase(id: string, status: string): RunCase {
    const before = this.#opened.previous?.cases?.[id];
    if (before && before.exit_status === status) return before;
    let read = this.#readCases.get(id);
    if (!read) {
      read = caseOf(trajectoryPath(this.#options.outputDir, id), status);
      this.#readCases.set(id, read);
    }
    return read;
  }

  /** An instance lost with its Docker host or its pod: queued again (the scheduler did it), told to all. */
  lost({ job, number, result, swarm }: EndedInstance): void {
    const hostName = job.host?.docker.name;
    const lostWith = hostName
      ? `with Docker host ${hostName}`
      : `with its pod: ${result.error instanceof Error ? result.error.message : String(result.error)}`;
    this.#opened.say(
      `${result.instance_id}: lost ${lostWith} (${result.exit_status}, cost ${result.cost.toFixed(4)}, ${result.api_calls} calls): queued again`,
    );
    this.#options.display.instanceLost?.(number, result.instance_id);
    this.swarms.lost(swarm, result, hostName);
    this.#options.onInstanceLost?.(result.instance_id);
  }

  /**
   * What happens when an instance ends: its prediction into preds.json, its status and case into run.json,
   * its end to the event streams, the log and the display, then `onInstanceEnd` (`--eval` grades it).
   */
  ended({ job, number, result, swarm, startedAt }: EndedInstance): void {
    const options = this.#options;
    const opened = this.#opened;
    const hostName = job.host?.docker.name;
    chaosPoint("trajectory-renamed");
    opened.guard(opened.preds.path, () =>
      opened.preds.set({
        model_name_or_path: this.#modelName,
        instance_id: result.instance_id,
        model_patch: result.submission,
      }),
    );
    noteStatus(opened.statuses, result.exit_status, result.instance_id);
    // Its facts, read once: its case in run.json, its events, the log and the display all show them.
    const facts = instanceFacts(
      trajectoryPath(options.outputDir, result.instance_id),
      result.exit_status,
      result.cost,
      result.timing ?? {
        started_at: startedAt / 1000,
        ended_at: Date.now() / 1000,
        wall_time_s: (Date.now() - startedAt) / 1000,
      },
    );
    this.#record.cases[result.instance_id] = {
      ...caseFromFacts(facts),
      ...(hostName ? { host: hostName } : {}),
    };
    this.swarms.ended(swarm, result, facts);
    this.save();
    opened.log(`${result.instance_id}: ${result.exit_status} (${figuresLine(facts)})`);
    options.display.instanceEnd(number, result, facts);
    options.onInstanceEnd?.(result, job.host?.docker.config);
  }

  /**
   * An instance whose trajectory could not be written: said, and no new instance starts. Nothing of its run
   * is recorded (its prediction neither); its earlier trajectory, when the folder has a finished one, is
   * kept and stays its record (status and case), so the folder's outputs agree with its trajectories.
   */
  unsaved({ number, result, swarm, startedAt }: EndedInstance): void {
    const options = this.#options;
    const opened = this.#opened;
    const id = result.instance_id;
    const unsaved = result.unsaved as NonNullable<InstanceResult["unsaved"]>;
    opened.failed(unsaved.error);
    const earlier = recordedOutcome(options.outputDir, id);
    const kept = earlier !== undefined && FINISHED_STATUSES.has(earlier.exit_status);
    this.unsavedRuns.push({ instance_id: id, cost: result.cost, kept });
    if (kept) this.#keepEarlier(id, earlier.exit_status);
    const facts = unsavedFacts(
      trajectoryPath(options.outputDir, id),
      id,
      result.exit_status,
      unsaved.error.message,
      result.cost,
      result.timing ?? {
        started_at: startedAt / 1000,
        ended_at: Date.now() / 1000,
        wall_time_s: (Date.now() - startedAt) / 1000,
      },
    );
    this.swarms.ended(swarm, result, facts);
    this.save();
    opened.say(
      `${id}: not saved (${unsaved.error.message}; cost ${result.cost.toFixed(4)}, ${result.api_calls} calls); ${kept ? `its earlier trajectory (${earlier.exit_status}) is kept` : "it runs again when the batch is resumed"}`,
    );
    options.display.instanceEnd(number, result, facts);
    options.onInstanceLost?.(id);
  }

  /** An instance's earlier finished trajectory stays its record: its status, and its case (as run.json had it, or read). */
  #keepEarlier(id: string, status: string): void {
    noteStatus(this.#opened.statuses, status, id);
    this.#record.cases[id] = this.#earlierCase(id, status);
  }

  /**
   * Instances queued to run again (`redoExisting`, or lost) that the batch never ended (it stopped early)
   * keep the finished trajectory the folder had for them as their record.
   */
  #keepUntouched(): void {
    for (const [id, status] of this.#untouched()) this.#keepEarlier(id, status);
  }

  /**
   * The workers are done (`stopped`: by Ctrl-C or a signal): exit_statuses_*.yaml and the last run.json
   * written (interrupted when stopped, an output failed or every host went down; else finished), the event
   * streams stopped; returns the run's status.
   */
  close(stopped: boolean): RunRecord["status"] {
    const opened = this.#opened;
    const record = this.#record;
    this.#keepUntouched();
    const byStatus = Object.fromEntries(
      [...opened.statuses].map(([status, ids]) => [status, [...ids].sort()]),
    );
    const statusFile = join(this.#options.outputDir, `exit_statuses_${timestampSlug()}.yaml`);
    opened.guard(statusFile, () =>
      writeFileAtomic(statusFile, [redact(toYaml({ instances_by_exit_status: byStatus }))]),
    );
    const interrupted = stopped || opened.failure() !== undefined;
    record.status = interrupted || opened.pool?.stopped ? "interrupted" : "finished";
    record.ended_at = new Date().toISOString();
    this.save();
    this.swarms.stop(record.status, record.exit_statuses, interrupted);
    return record.status;
  }
}

/** run.json's `hosts`: each Docker host of the pool, its workers, and whether it answered last. */
function hostRecord(pool: HostPool): RunRecord["hosts"] {
  return pool.status().map(({ host, workers, state }) => ({ host, workers, state }));
}
