import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { stringify as toYaml } from "yaml";
import type { Agent } from "../agent/agent.js";
import type { DockerHostConfig } from "../config/docker-hosts.js";
import { modelDisplayName } from "../config/model.js";
import type { SwerunConfig } from "../config/schema.js";
import { type Instance, repeatedIds } from "../datasets/dataset.js";
import { PredictionsFile } from "../datasets/predictions.js";
import { UserError } from "../errors.js";
import { EventBus } from "../events.js";
import { figuresLine } from "../facts/figures.js";
import {
  type DatasetSelection,
  type RunRecord,
  readRunRecord,
  runJsonPath,
  writeRunRecord,
} from "../formats/run-json.js";
import { HostPool } from "../images/host-pool.js";
import { onInterruptSignals } from "../run/signals.js";
import { caseFromFacts } from "../tracking/case.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { chaosPoint } from "../util/chaos.js";
import { FileWriteError, fileWriteError } from "../util/file-error.js";
import { timestampSlug } from "../util/ids.js";
import { pathInside } from "../util/safe-path.js";
import { redact } from "../util/secrets.js";
import { runWorkers } from "../util/worker-pool.js";
import type { BatchDisplay } from "./display.js";
import { type BatchImages, type HoldImage, openBatchImages } from "./images.js";
import {
  FINISHED_STATUSES,
  type InstanceContext,
  type InstanceResult,
  recordedOutcome,
  runInstance,
  trajectoryPath,
} from "./instance.js";
import { lockOutputDir } from "./lock.js";
import { batchLog } from "./log.js";
import { caseOf, instanceFacts, newRunRecord, unsavedFacts, updateTotals } from "./record.js";
import { recordedResults, recoverFolder } from "./recover.js";
import { type Job, Scheduler } from "./scheduler.js";
import { BatchSwarms, type SwarmStreams } from "./swarms.js";

/** Where a Kubernetes instance's pod is (environments/kubernetes/pod-state.ts's phases). */
type PodPhase = "pending" | "pulling" | "running";

export interface BatchOptions {
  instances: Instance[];
  config: SwerunConfig;
  outputDir: string;
  workers: number;
  redoExisting: boolean;
  runId: string;
  label?: string;
  subset: string;
  split: string;
  /** How the instances were selected (recorded in run.json). */
  dataset?: Omit<DatasetSelection, "subset" | "split">;
  /** The image name template (recorded in run.json's agent snapshot). */
  imageTemplate?: string;
  display: BatchDisplay;
  prepare: InstanceContext["prepare"];
  /**
   * Removes the Docker containers an earlier run of this folder (`runId`, from its run.json) left behind
   * when it was killed; returns one line per container removed. Called when the batch starts, with the
   * pool's hosts that answer when there is a pool.
   */
  removeContainers?: (runId: string, hosts?: DockerHostConfig[]) => Promise<string[]>;
  /** Called after each instance ends and its prediction is saved (e.g. `--eval` grades it); must not throw. */
  onInstanceEnd?: (result: InstanceResult, host?: DockerHostConfig) => void;
  /**
   * Called when an instance's agent starts, its environment up (`--eval` starts the grading container
   * then if `onInstanceStart` did not, its image still to pull or build); must not throw.
   */
  onInstanceRunning?: (instanceId: string, host?: DockerHostConfig) => void;
  /**
   * Called as an instance starts, before its environment (`--eval` may start its grading container then).
   * With a pool of hosts, these callbacks are told the host the instance runs on.
   */
  onInstanceStart?: (instanceId: string, host?: DockerHostConfig) => void;
  /**
   * Kubernetes: deletes the pods and run ConfigMaps an earlier run of this folder (`runId`) left behind when
   * it was killed; returns one line per object deleted. Called when the batch starts.
   */
  removePods?: (runId: string) => Promise<string[]>;
  /**
   * Called when an instance's run is not kept: lost with its host or its pod (it goes back to the queue), or
   * its trajectory could not be written (it runs again when the batch is resumed); must not throw.
   */
  onInstanceLost?: (instanceId: string) => void;
  /**
   * Called when an instance's agent submits, before its environment is closed and its prediction saved
   * (`--eval` begins grading then; `onInstanceEnd` follows with the same submission); must not throw.
   */
  onInstanceSubmitted?: (instanceId: string, submission: string, host?: DockerHostConfig) => void;
  /** Event streams (`--events`), see batch-swarms.ts. */
  eventStreams?: SwarmStreams;
  /** Several Docker daemons (host-pool.ts); `workers` is then their sum. */
  hosts?: DockerHostConfig[];
  /** Where `hosts` came from, for messages (`--docker-host`, `environment.docker_hosts`). */
  hostsSource?: string;
  /** How often a down host is tried again, in ms (default 5000). */
  hostProbeMs?: number;
  /** How long a host running instances may take to answer a ping before it is down (default 30 s). */
  hostAnswerTimeoutMs?: number;
  /** An instance's image, so the pool can prefer a host that has it. */
  imageOf?: (instance: Instance) => string | undefined;
  /** Docker batches: pull ahead, the disk budget and the preflight (batch-images.ts). */
  images?: BatchImages;
  /** Given, as the batch starts, how to get an image through its images (`--eval`'s gradings outside their instance). */
  onImages?: (hold: HoldImage) => void;
  /** Called when the workers are done, before the images close (`--eval` ends its gradings then); must not throw. */
  onWorkersDone?: () => Promise<void>;
}

export interface BatchSummary {
  /** The instances by exit status, as their trajectories in the folder record them. */
  statuses: Map<string, string[]>;
  cost: number;
  interrupted: boolean;
  /** Every Docker host of the pool went down: the batch stopped early (resumable). */
  hostsDown?: boolean;
  /**
   * The first output the batch could not write (a full disk, a folder made read-only): no new instance
   * started after it (resumable once the folder can be written again).
   */
  outputFailure?: FileWriteError;
  /**
   * Instances whose run this batch could not save: their earlier trajectory (`kept`, counted in `statuses`)
   * or nothing stays, and `cost` was spent on them all the same.
   */
  unsaved?: Array<{ instance_id: string; cost: number; kept: boolean }>;
}

/**
 * A batch, as states (the process's signals move it, see run/signals.ts):
 *
 * | state       | entered by                      | what it means                                      |
 * | ----------- | ------------------------------- | -------------------------------------------------- |
 * | running     | `run()`                         | workers take instances from the scheduler          |
 * | interrupted | first Ctrl-C, or an output that | no new instance starts; running ones finish        |
 * |             | cannot be written (full disk)   | (those that can no longer write their trajectory stop) |
 * | stopping    | second Ctrl-C or SIGTERM        | running agents stop with exit status Interrupted   |
 *
 * An instance:
 *
 * | state           | entered by                                   | then                                  |
 * | --------------- | -------------------------------------------- | ------------------------------------- |
 * | finished before | its trajectory's exit status (a resume)      | kept, not run (unless `redoExisting`) |
 * | queued          | `open` (`sortInstances`), or lost            | a worker takes it (`#runInstance`)    |
 * | started         | image ready; `onInstanceStart`               | its agent starts                      |
 * | running         | `onInstanceRunning`; `onInstanceSubmitted`   | ended, or lost                        |
 * | ended           | `#instanceEnded`: preds.json, run.json, log, display, `onInstanceEnd` | —            |
 * | not saved       | `#instanceUnsaved`: its trajectory could not be written | earlier trajectory kept; runs again on resume |
 * | lost            | `#instanceLost`: its Docker host went away   | queued again                          |
 *
 * When the workers are done, `#close` writes the last run.json (finished or interrupted) and releases the folder.
 */
type BatchState = "running" | "interrupted" | "stopping";

/**
 * Runs instances on `workers` parallel workers in this process and keeps the outputs of the folder
 * up to date after every instance: trajectories, preds.json, a log, run.json. First Ctrl-C: no new
 * instances start; second Ctrl-C or SIGTERM: running ones stop with exit status Interrupted.
 */
export async function runBatch(options: BatchOptions): Promise<BatchSummary> {
  const repeated = repeatedIds(options.instances).map(([id]) => id);
  if (repeated.length > 0) throw new UserError(`instance ids appear more than once: ${repeated.join(", ")}`);
  return (await BatchRun.open(options)).run();
}

/** What `BatchRun.open` finds and opens before the first instance starts. */
interface Opened {
  release: () => void;
  log: (line: string) => void;
  say: (line: string) => void;
  /** An output that could not be written: said once (the first), and no new instance starts after it. */
  failed: (error: FileWriteError) => void;
  /** The first output that could not be written, if one was not. */
  failure: () => FileWriteError | undefined;
  previous: ReturnType<typeof readRunRecord>;
  pool: HostPool | undefined;
  preds: PredictionsFile;
  results: ReturnType<typeof recordedResults>;
  statuses: Map<string, string[]>;
  queue: Instance[];
  scheduler: Scheduler;
  images: Awaited<ReturnType<typeof openBatchImages>>;
}

class BatchRun {
  #state: BatchState = "running";
  /** The agent each worker runs, to stop them. */
  readonly #agents = new Map<number, Agent>();
  /** Instances whose run could not be saved (`#instanceUnsaved`). */
  readonly #unsaved: NonNullable<BatchSummary["unsaved"]> = [];
  readonly #record: RunRecord;
  readonly #swarms: BatchSwarms;
  readonly #modelName: string;
  /** Kubernetes: where each running instance's pod is (for the display's pods line). */
  readonly #podPhases = new Map<string, PodPhase>();

  private constructor(
    private readonly options: BatchOptions,
    private readonly opened: Opened,
  ) {
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
    this.#swarms = new BatchSwarms(options.eventStreams, this.#runId, options.label ?? options.subset);
  }

  /**
   * Locks the folder, opens the pool of hosts, recovers what an earlier run left (recover.ts), sorts the
   * instances into finished before and queued, and opens the batch's images; on failure releases it all.
   */
  static async open(options: BatchOptions): Promise<BatchRun> {
    const { outputDir } = options;
    const release = lockOutputDir(outputDir);
    const { log, say, failed, failure } = batchLog(outputDir, options.display);
    const previous = readRunRecord(runJsonPath(outputDir));
    const runId = previous?.run_id || options.runId;
    let pool: HostPool | undefined;
    try {
      pool = await openHostPool(options, runId, say);
      const preds = new PredictionsFile(join(outputDir, "preds.json"));
      const results = recordedResults(outputDir);
      await recoverFolder({
        outputDir,
        previous,
        environmentClass: options.config.environment.environment_class,
        preds,
        results,
        modelName: modelDisplayName(options.config.model),
        say,
        pool,
        removeContainers: options.removeContainers,
        removePods: options.removePods,
      });
      const { statuses, queue } = sortInstances(options, results);
      const scheduler = new Scheduler(queue, pool, options.imageOf);
      const images = await openBatchImages(options, {
        queue,
        scheduler,
        pool,
        workers: options.workers,
        runId,
        folder: outputDir,
        ...(previous?.images ? { previous: previous.images } : {}),
        say,
        log,
      });
      const opened = {
        release,
        log,
        say,
        failed,
        failure,
        previous,
        pool,
        preds,
        results,
        statuses,
        queue,
        scheduler,
        images,
      };
      return new BatchRun(options, opened);
    } catch (error) {
      pool?.close();
      release();
      throw error;
    }
  }

  /** A resumed batch keeps its run id: its containers carry it, so a later resume or `cleanup --run-id` finds them. */
  get #runId(): string {
    return this.#record.run_id;
  }

  /** Runs the queued instances on the workers until the queue is empty or the batch is stopped. */
  async run(): Promise<BatchSummary> {
    const { options, opened } = this;
    const { pool, queue, scheduler, images } = opened;
    this.#recordFinishedBefore();
    this.#saveRecord();
    chaosPoint("run-recorded");
    const workers = pool ? pool.workers : options.workers;
    opened.log(
      `run ${this.#runId}: ${queue.length} to run, ${options.instances.length - queue.length} finished before, ${workers} workers${pool ? ` on ${pool.hosts.length} Docker hosts` : ""}`,
    );
    if (pool) options.display.hosts?.(pool.status());
    options.display.start(queue.length, options.instances.length - queue.length);
    const signals = onInterruptSignals({
      interrupt: () => this.#interrupt(),
      stop: () => this.#stop(),
      third: "stop",
    });
    images?.started(() => this.#saveRecord(), options.display);
    if (images) options.onImages?.(images.hold);
    try {
      await runWorkers({
        workers,
        next: () => scheduler.next(),
        work: (job, number) => this.#runInstance(job, number),
        stopping: () => this.#state !== "running" || opened.failure() !== undefined,
        putBack: (job) => scheduler.end(job, { requeue: true }),
      });
    } finally {
      try {
        await this.#close();
      } finally {
        signals.dispose();
      }
    }
    const failure = opened.failure();
    return {
      statuses: opened.statuses,
      cost: this.#record.total_cost,
      interrupted: this.#state !== "running" && !failure,
      ...(pool?.stopped ? { hostsDown: true } : {}),
      ...(failure ? { outputFailure: failure } : {}),
      ...(this.#unsaved.length > 0 ? { unsaved: this.#unsaved } : {}),
    };
  }

  /** Runs a write of the batch's outputs; one that fails is said (the first) and stops new instances. */
  #guard(path: string, write: () => void): boolean {
    try {
      write();
      return true;
    } catch (error) {
      if (!(error instanceof FileWriteError) && (error as NodeJS.ErrnoException).code === undefined)
        throw error;
      this.opened.failed(fileWriteError(path, error));
      return false;
    }
  }

  /** First Ctrl-C: no new instance starts. */
  #interrupt(): void {
    this.#state = "interrupted";
    this.options.display.message(
      "Ctrl-C: no new instances will start; running ones finish. Press Ctrl-C again to stop them.",
    );
    this.opened.log("interrupt: no new instances");
  }

  /** Second Ctrl-C or SIGTERM: the running agents stop with exit status Interrupted. */
  #stop(): void {
    this.#state = "stopping";
    this.options.display.message("Stopping running instances (exit status Interrupted)...");
    this.opened.log("interrupt: stopping running instances");
    for (const agent of this.#agents.values()) agent.stop("Interrupted");
  }

  /** Skipped instances to the event streams; those that finished before keep their case in run.json. */
  #recordFinishedBefore(): void {
    const { options, opened } = this;
    const queued = new Set(opened.queue);
    for (const instance of options.instances) {
      if (!queued.has(instance))
        this.#swarms.skipped(instance.instance_id, opened.results.get(instance.instance_id)?.exit_status);
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

  #saveRecord(): void {
    const record = this.#record;
    if (this.opened.images) record.images = this.opened.images.record;
    record.exit_statuses = Object.fromEntries(
      [...this.opened.statuses].map(([status, ids]) => [status, ids.length]),
    );
    updateTotals(record, false);
    if (this.opened.pool) record.hosts = hostRecord(this.opened.pool);
    const path = runJsonPath(this.options.outputDir);
    this.#guard(path, () => writeRunRecord(path, record));
  }

  /** One instance on worker `number`: its image, its agent, then `#instanceEnded` or `#instanceLost`. */
  async #runInstance(job: Job, number: number): Promise<void> {
    const { options, opened } = this;
    const { instance } = job;
    const hostName = job.host?.docker.name;
    const hostConfig = job.host?.docker.config;
    const startedAt = Date.now();
    const folder = pathInside(options.outputDir, instance.instance_id);
    if (!this.#guard(folder, () => mkdirSync(folder, { recursive: true }))) {
      opened.scheduler.end(job, { requeue: true });
      return;
    }
    options.display.instanceStart(number, instance.instance_id, hostName);
    // The image first: a grading container started meanwhile would pull it as someone else's.
    await opened.images?.ready(instance, job.host);
    if (opened.failure()) {
      // An output failed while the image was readied: the instance does not start.
      opened.scheduler.end(job, { requeue: true });
      opened.images?.ended(instance, job.host);
      options.display.instanceLost?.(number, instance.instance_id);
      return;
    }
    options.onInstanceStart?.(instance.instance_id, hostConfig);
    opened.log(
      `${instance.instance_id}: start (worker ${number}${hostName ? `, Docker host ${hostName}` : ""})`,
    );
    const bus = this.#instanceBus(instance, number, hostConfig);
    const swarm = this.#swarms.instance(instance);
    if (swarm) bus.subscribe(swarm.listener);
    const result = await runInstance(instance, {
      config: this.#configOn(job),
      outputDir: options.outputDir,
      runId: this.#runId,
      bus,
      startedAt,
      prepare: options.prepare,
      onAgent: (agent) => this.#agentChanged(number, agent),
      lost: async (error) => (job.host ? opened.scheduler.lost(job) : opened.scheduler.lostPod(job, error)),
      onPodPhase: (phase) => this.#podPhase(instance.instance_id, phase),
    });
    this.#podPhase(instance.instance_id, undefined);
    opened.scheduler.end(job, { ran: FINISHED_STATUSES.has(result.exit_status), requeue: result.lost });
    opened.images?.ended(instance, job.host);
    const ended = { job, number, result, swarm, startedAt };
    if (result.lost) this.#instanceLost(ended);
    else if (result.unsaved) this.#instanceUnsaved(ended);
    else this.#instanceEnded(ended);
  }

  /** Kubernetes: an instance's pod moved on (undefined: its instance ended); the display counts them. */
  #podPhase(instanceId: string, phase: PodPhase | undefined): void {
    const before = this.#podPhases.get(instanceId);
    if (phase === before) return;
    if (phase) this.#podPhases.set(instanceId, phase);
    else if (before) this.#podPhases.delete(instanceId);
    else return;
    const counts = { pending: 0, pulling: 0, running: 0 };
    for (const each of this.#podPhases.values()) counts[each]++;
    this.options.display.pods?.(counts);
  }

  /** The instance's environment runs on its host, and its trajectory records which one. */
  #configOn(job: Job): SwerunConfig {
    const { config } = this.options;
    if (!job.host || config.environment.environment_class !== "docker") return config;
    return { ...config, environment: { ...config.environment, docker_hosts: [job.host.docker.config] } };
  }

  /** The instance's events: to the display, the `--eval` hooks, the log. */
  #instanceBus(instance: Instance, number: number, host: DockerHostConfig | undefined): EventBus {
    const { options } = this;
    const id = instance.instance_id;
    const bus = new EventBus();
    bus.subscribe((event) => options.display.event(number, event));
    bus.subscribe((event) => {
      if (event.type === "run_start") options.onInstanceRunning?.(id, host);
      if (event.type === "run_end" && event.submission && FINISHED_STATUSES.has(event.exit_status))
        options.onInstanceSubmitted?.(id, event.submission, host);
      if (event.type === "action_start") chaosPoint("action-start");
      if (event.type === "model_retry")
        this.opened.log(`${id}: model retry ${event.attempt}: ${event.error}`);
    });
    return bus;
  }

  /** A worker's agent started (stopped at once when the batch is stopping) or ended (undefined). */
  #agentChanged(number: number, agent: Agent | undefined): void {
    if (!agent) {
      this.#agents.delete(number);
      return;
    }
    this.#agents.set(number, agent);
    if (this.#state === "stopping") agent.stop("Interrupted");
  }

  /** An instance lost with its Docker host or its pod: queued again (the scheduler did it), told to all. */
  #instanceLost({ job, number, result, swarm }: EndedInstance): void {
    const hostName = job.host?.docker.name;
    const lostWith = hostName
      ? `with Docker host ${hostName}`
      : `with its pod: ${result.error instanceof Error ? result.error.message : String(result.error)}`;
    this.opened.say(
      `${result.instance_id}: lost ${lostWith} (${result.exit_status}, cost ${result.cost.toFixed(4)}, ${result.api_calls} calls): queued again`,
    );
    this.options.display.instanceLost?.(number, result.instance_id);
    this.#swarms.lost(swarm, result, hostName);
    this.options.onInstanceLost?.(result.instance_id);
  }

  /**
   * What happens when an instance ends: its prediction into preds.json, its status and case into run.json,
   * its end to the event streams, the log and the display, then `onInstanceEnd` (`--eval` grades it).
   */
  #instanceEnded({ job, number, result, swarm, startedAt }: EndedInstance): void {
    const { options, opened } = this;
    const hostName = job.host?.docker.name;
    chaosPoint("trajectory-renamed");
    this.#guard(opened.preds.path, () =>
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
    this.#swarms.ended(swarm, result, facts);
    this.#saveRecord();
    opened.log(`${result.instance_id}: ${result.exit_status} (${figuresLine(facts)})`);
    options.display.instanceEnd(number, result, facts);
    options.onInstanceEnd?.(result, job.host?.docker.config);
  }

  /**
   * An instance whose trajectory could not be written: said, and no new instance starts. Nothing of its run
   * is recorded (its prediction neither); its earlier trajectory, when the folder has a finished one, is
   * kept and stays its record (status and case), so the folder's outputs agree with its trajectories.
   */
  #instanceUnsaved({ number, result, swarm, startedAt }: EndedInstance): void {
    const { options, opened } = this;
    const id = result.instance_id;
    const unsaved = result.unsaved as NonNullable<InstanceResult["unsaved"]>;
    opened.failed(unsaved.error);
    const earlier = recordedOutcome(options.outputDir, id);
    const kept = earlier !== undefined && FINISHED_STATUSES.has(earlier.exit_status);
    this.#unsaved.push({ instance_id: id, cost: result.cost, kept });
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
    this.#swarms.ended(swarm, result, facts);
    this.#saveRecord();
    opened.say(
      `${id}: not saved (${unsaved.error.message}; cost ${result.cost.toFixed(4)}, ${result.api_calls} calls); ${kept ? `its earlier trajectory (${earlier.exit_status}) is kept` : "it runs again when the batch is resumed"}`,
    );
    options.display.instanceEnd(number, result, facts);
    options.onInstanceLost?.(id);
  }

  /** An instance's earlier finished trajectory stays its record: its status, and its case (as run.json had it, or read). */
  #keepEarlier(id: string, status: string): void {
    noteStatus(this.opened.statuses, status, id);
    const before = this.opened.previous?.cases?.[id];
    this.#record.cases[id] =
      before && before.exit_status === status
        ? before
        : caseOf(trajectoryPath(this.options.outputDir, id), status);
  }

  /**
   * Instances queued to run again (`redoExisting`, or lost) that the batch never ended (it stopped early)
   * keep the finished trajectory the folder had for them as their record.
   */
  #keepUntouched(): void {
    const recorded = new Set([...this.opened.statuses.values()].flat());
    for (const { instance_id: id } of this.options.instances) {
      const earlier = this.opened.results.get(id)?.exit_status;
      if (!recorded.has(id) && earlier && FINISHED_STATUSES.has(earlier)) this.#keepEarlier(id, earlier);
    }
  }

  /** The workers are done: images and hosts closed, exit_statuses_*.yaml and the last run.json written, the folder released. */
  async #close(): Promise<void> {
    const { options, opened } = this;
    const { pool } = opened;
    const record = this.#record;
    await options.onWorkersDone?.();
    await opened.images?.close();
    for (const line of pool?.leftoverHints(this.#runId) ?? []) opened.say(line);
    pool?.close();
    options.display.stop();
    this.#keepUntouched();
    const byStatus = Object.fromEntries(
      [...opened.statuses].map(([status, ids]) => [status, [...ids].sort()]),
    );
    const statusFile = join(options.outputDir, `exit_statuses_${timestampSlug()}.yaml`);
    this.#guard(statusFile, () =>
      writeFileAtomic(statusFile, [redact(toYaml({ instances_by_exit_status: byStatus }))]),
    );
    const interrupted = this.#state !== "running" || opened.failure() !== undefined;
    record.status = interrupted || pool?.stopped ? "interrupted" : "finished";
    record.ended_at = new Date().toISOString();
    this.#saveRecord();
    this.#swarms.stop(record.status, record.exit_statuses, interrupted);
    opened.log(`run ${this.#runId}: ${record.status}`);
    opened.release();
  }
}

/** An instance whose agent is done, as `#instanceEnded` and `#instanceLost` take it. */
interface EndedInstance {
  job: Job;
  number: number;
  result: InstanceResult;
  swarm: ReturnType<BatchSwarms["instance"]>;
  startedAt: number;
}

/** The pool of Docker hosts, when the batch has several (host-pool.ts). */
async function openHostPool(
  options: BatchOptions,
  runId: string,
  say: (line: string) => void,
): Promise<HostPool | undefined> {
  if (!options.hosts || options.hosts.length === 0) return undefined;
  return HostPool.open(options.hosts, options.hostsSource ?? "environment.docker_hosts", {
    say,
    onChange: (hosts) => options.display.hosts?.(hosts),
    runId,
    ...(options.hostProbeMs ? { probeMs: options.hostProbeMs } : {}),
    ...(options.hostAnswerTimeoutMs ? { answerTimeoutMs: options.hostAnswerTimeoutMs } : {}),
  });
}

function noteStatus(statuses: Map<string, string[]>, status: string, id: string): void {
  statuses.set(status, [...(statuses.get(status) ?? []), id]);
}

/** Instances that finished before (kept, unless `redoExisting`) by exit status, and the queue of the others. */
function sortInstances(
  options: BatchOptions,
  results: ReturnType<typeof recordedResults>,
): { statuses: Map<string, string[]>; queue: Instance[] } {
  const statuses = new Map<string, string[]>();
  const queue: Instance[] = [];
  for (const instance of options.instances) {
    const previous = results.get(instance.instance_id)?.exit_status;
    if (!options.redoExisting && previous && FINISHED_STATUSES.has(previous))
      noteStatus(statuses, previous, instance.instance_id);
    else queue.push(instance);
  }
  return { statuses, queue };
}

/** run.json's `hosts`: each Docker host of the pool, its workers, and whether it answered last. */
function hostRecord(pool: HostPool): RunRecord["hosts"] {
  return pool.status().map(({ host, workers, state }) => ({ host, workers, state }));
}
