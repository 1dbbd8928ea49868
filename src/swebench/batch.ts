import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { stringify as toYaml } from "yaml";
import type { Agent } from "../agent/agent.js";
import type { DockerHostConfig } from "../config/docker-hosts.js";
import { modelDisplayName } from "../config/model.js";
import type { SwerunConfig } from "../config/schema.js";
import { UserError } from "../errors.js";
import { EventBus } from "../events.js";
import type { DatasetSelection } from "../tracking/snapshot.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { chaosPoint } from "../util/chaos.js";
import { timestampSlug } from "../util/ids.js";
import { redact } from "../util/secrets.js";
import type { BatchDisplay } from "./batch-display.js";
import { type BatchImages, openBatchImages } from "./batch-images.js";
import type { RunRecord } from "./batch-record.js";
import { caseOf, newRunRecord, readRunRecord, updateTotals, writeRunRecord } from "./batch-record.js";
import { BatchSwarms, type SwarmStreams } from "./batch-swarms.js";
import { type Instance, repeatedIds } from "./dataset.js";
import { HostPool } from "./host-pool.js";
import {
  FINISHED_STATUSES,
  type InstanceContext,
  type InstanceResult,
  runInstance,
  trajectoryPath,
} from "./instance.js";
import { lockOutputDir } from "./lock.js";
import { PredictionsFile } from "./predictions.js";
import { recordedResults, recoverFolder } from "./recover.js";
import { Scheduler } from "./scheduler.js";

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
  /** Called when an instance was lost with its host and goes back to the queue; must not throw. */
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
}

export interface BatchSummary {
  statuses: Map<string, string[]>;
  cost: number;
  interrupted: boolean;
  /** Every Docker host of the pool went down: the batch stopped early (resumable). */
  hostsDown?: boolean;
}

/**
 * Runs instances on `workers` parallel workers in this process and keeps the outputs of the folder
 * up to date after every instance: trajectories, preds.json, a log, run.json. First Ctrl-C: no new
 * instances start; second Ctrl-C or SIGTERM: running ones stop with exit status Interrupted.
 */
export async function runBatch(options: BatchOptions): Promise<BatchSummary> {
  const { outputDir, display } = options;
  const repeated = repeatedIds(options.instances).map(([id]) => id);
  if (repeated.length > 0) throw new UserError(`instance ids appear more than once: ${repeated.join(", ")}`);
  const release = lockOutputDir(outputDir);
  const logPath = join(outputDir, "swerun.log");
  const log = (line: string) => appendFileSync(logPath, `${new Date().toISOString()} ${redact(line)}\n`);
  const say = (line: string) => {
    display.message(line);
    log(line);
  };
  const modelName = modelDisplayName(options.config.model);
  let preds: PredictionsFile;
  let results: ReturnType<typeof recordedResults>;
  let pool: HostPool | undefined;
  const previous = readRunRecord(join(outputDir, "run.json"));
  try {
    if (options.hosts && options.hosts.length > 0) {
      pool = await HostPool.open(options.hosts, options.hostsSource ?? "environment.docker_hosts", {
        say,
        onChange: (hosts) => display.hosts?.(hosts),
        runId: previous?.run_id || options.runId,
        ...(options.hostProbeMs ? { probeMs: options.hostProbeMs } : {}),
        ...(options.hostAnswerTimeoutMs ? { answerTimeoutMs: options.hostAnswerTimeoutMs } : {}),
      });
    }
    preds = new PredictionsFile(join(outputDir, "preds.json"));
    results = recordedResults(outputDir);
    await recoverFolder({
      outputDir,
      previous,
      environmentClass: options.config.environment.environment_class,
      preds,
      results,
      modelName,
      say,
      pool,
      removeContainers: options.removeContainers,
    });
  } catch (error) {
    pool?.close();
    release();
    throw error;
  }
  const statuses = new Map<string, string[]>();
  const note = (status: string, id: string) => statuses.set(status, [...(statuses.get(status) ?? []), id]);
  const queue: Instance[] = [];
  for (const instance of options.instances) {
    const previous = results.get(instance.instance_id)?.exit_status;
    if (!options.redoExisting && previous && FINISHED_STATUSES.has(previous))
      note(previous, instance.instance_id);
    else queue.push(instance);
  }
  const scheduler = new Scheduler(queue, pool, options.imageOf);
  let images: Awaited<ReturnType<typeof openBatchImages>>;
  try {
    images = await openBatchImages(options, {
      queue,
      scheduler,
      pool,
      workers: options.workers,
      runId: previous?.run_id || options.runId,
      folder: outputDir,
      ...(previous?.images ? { previous: previous.images } : {}),
      say,
      log,
    });
  } catch (error) {
    pool?.close();
    release();
    throw error;
  }
  const record = newRunRecord({
    runId: options.runId,
    label: options.label,
    modelName,
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
    previous,
  });
  const cases = record.cases;
  // A resumed batch keeps its run id: its containers carry it, so a later resume or `cleanup --run-id` finds them.
  const runId = record.run_id;
  const swarms = new BatchSwarms(options.eventStreams, runId, options.label ?? options.subset);
  const queued = new Set(queue);
  for (const instance of options.instances) {
    if (!queued.has(instance))
      swarms.skipped(instance.instance_id, results.get(instance.instance_id)?.exit_status);
  }
  // Instances that finished before (a resumed batch) keep their case; one recorded nowhere is read from its trajectory.
  for (const [status, ids] of statuses) {
    for (const id of ids) {
      const earlier = previous?.cases?.[id];
      cases[id] =
        earlier && earlier.exit_status === status ? earlier : caseOf(trajectoryPath(outputDir, id), status);
    }
  }
  const saveRecord = () => {
    if (images) record.images = images.record;
    record.exit_statuses = Object.fromEntries([...statuses].map(([status, ids]) => [status, ids.length]));
    updateTotals(record, false);
    if (pool) record.hosts = hostRecord(pool);
    writeRunRecord(join(outputDir, "run.json"), record);
  };
  saveRecord();
  chaosPoint("run-recorded");
  const workers = pool ? pool.workers : options.workers;
  log(
    `run ${runId}: ${queue.length} to run, ${options.instances.length - queue.length} finished before, ${workers} workers${pool ? ` on ${pool.hosts.length} Docker hosts` : ""}`,
  );
  if (pool) display.hosts?.(pool.status());
  display.start(queue.length, options.instances.length - queue.length);

  const agents = new Map<number, Agent>();
  let stopping = 0;
  const onSigint = () => {
    stopping += 1;
    if (stopping === 1) {
      display.message(
        "Ctrl-C: no new instances will start; running ones finish. Press Ctrl-C again to stop them.",
      );
      log("interrupt: no new instances");
    } else stopAll();
  };
  const stopAll = () => {
    stopping = Math.max(stopping, 2);
    display.message("Stopping running instances (exit status Interrupted)...");
    log("interrupt: stopping running instances");
    for (const agent of agents.values()) agent.stop("Interrupted");
  };
  process.on("SIGINT", onSigint);
  process.on("SIGTERM", stopAll);

  images?.started(saveRecord, display);
  const worker = async (number: number) => {
    for (;;) {
      if (stopping > 0) return;
      const job = await scheduler.next();
      if (!job) return;
      if (stopping > 0) return scheduler.end(job, { requeue: true });
      const { instance } = job;
      const hostName = job.host?.docker.name;
      // The instance's environment runs on its host, and its trajectory records which one.
      const config =
        job.host && options.config.environment.environment_class === "docker"
          ? {
              ...options.config,
              environment: { ...options.config.environment, docker_hosts: [job.host.docker.config] },
            }
          : options.config;
      const started = Date.now();
      display.instanceStart(number, instance.instance_id, hostName);
      const hostConfig = job.host?.docker.config;
      // The image first: a grading container started meanwhile would pull it as someone else's.
      await images?.ready(instance, job.host);
      options.onInstanceStart?.(instance.instance_id, hostConfig);
      log(`${instance.instance_id}: start (worker ${number}${hostName ? `, Docker host ${hostName}` : ""})`);
      const bus = new EventBus();
      bus.subscribe((event) => display.event(number, event));
      bus.subscribe((event) => {
        if (event.type === "run_start") options.onInstanceRunning?.(instance.instance_id, hostConfig);
        if (event.type === "run_end" && event.submission && FINISHED_STATUSES.has(event.exit_status))
          options.onInstanceSubmitted?.(instance.instance_id, event.submission, hostConfig);
        if (event.type === "action_start") chaosPoint("action-start");
        if (event.type === "model_retry")
          log(`${instance.instance_id}: model retry ${event.attempt}: ${event.error}`);
      });
      const swarm = swarms.instance(instance);
      if (swarm) bus.subscribe(swarm.listener);
      mkdirSync(join(outputDir, instance.instance_id), { recursive: true });
      const result: InstanceResult = await runInstance(instance, {
        config,
        outputDir,
        runId,
        bus,
        startedAt: started,
        prepare: options.prepare,
        onAgent: (agent) => {
          if (agent) {
            agents.set(number, agent);
            if (stopping >= 2) agent.stop("Interrupted");
          } else agents.delete(number);
        },
        ...(job.host ? { lost: () => scheduler.lost(job) } : {}),
      });
      scheduler.end(job, { ran: FINISHED_STATUSES.has(result.exit_status), requeue: result.lost });
      images?.ended(instance, job.host);
      if (result.lost) {
        log(
          `${instance.instance_id}: lost with Docker host ${hostName} (${result.exit_status}, cost ${result.cost.toFixed(4)}, ${result.api_calls} calls): queued again`,
        );
        display.instanceLost?.(number, instance.instance_id);
        swarms.lost(swarm, result, hostName);
        options.onInstanceLost?.(instance.instance_id);
        continue;
      }
      chaosPoint("trajectory-renamed");
      preds.set({
        model_name_or_path: modelName,
        instance_id: result.instance_id,
        model_patch: result.submission,
      });
      note(result.exit_status, result.instance_id);
      cases[result.instance_id] = {
        ...caseOf(trajectoryPath(outputDir, result.instance_id), result.exit_status, result.cost),
        ...(hostName ? { host: hostName } : {}),
      };
      const wallTime = result.timing?.wall_time_s ?? (Date.now() - started) / 1000;
      swarms.ended(swarm, result, wallTime * 1000);
      saveRecord();
      log(
        `${result.instance_id}: ${result.exit_status} (cost ${result.cost.toFixed(4)}, ${result.api_calls} calls)`,
      );
      display.instanceEnd(number, result, wallTime);
      options.onInstanceEnd?.(result, hostConfig);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, workers) }, (_, i) => worker(i + 1)));
  } finally {
    await images?.close();
    for (const line of pool?.leftoverHints(runId) ?? []) say(line);
    pool?.close();
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", stopAll);
    display.stop();
    const byStatus = Object.fromEntries([...statuses].map(([status, ids]) => [status, [...ids].sort()]));
    writeFileAtomic(join(outputDir, `exit_statuses_${timestampSlug()}.yaml`), [
      redact(toYaml({ instances_by_exit_status: byStatus })),
    ]);
    record.status = stopping > 0 || pool?.stopped ? "interrupted" : "finished";
    record.ended_at = new Date().toISOString();
    saveRecord();
    swarms.stop(record.status, record.exit_statuses, stopping > 0);
    log(`run ${runId}: ${record.status}`);
    release();
  }
  return {
    statuses,
    cost: record.total_cost,
    interrupted: stopping > 0,
    ...(pool?.stopped ? { hostsDown: true } : {}),
  };
}

/** run.json's `hosts`: each Docker host of the pool, its workers, and whether it answered last. */
function hostRecord(pool: HostPool): RunRecord["hosts"] {
  return pool.status().map(({ host, workers, state }) => ({ host, workers, state }));
}
