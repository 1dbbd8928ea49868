import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { stringify as toYaml } from "yaml";
import type { Agent } from "../agent/agent.js";
import type { SwerunConfig } from "../config/schema.js";
import type { DockerHostConfig } from "../environments/docker/host-spec.js";
import { UserError } from "../errors.js";
import { EventBus } from "../events.js";
import { caseFromTrajectory, type RunCase } from "../runs/case.js";
import { sumMetrics } from "../runs/metrics.js";
import { agentSnapshot, type DatasetSelection } from "../runs/snapshot.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { chaosPoint } from "../util/chaos.js";
import { timestampSlug } from "../util/ids.js";
import { swerunVersion } from "../util/package-root.js";
import { withoutSecrets } from "../util/sanitize.js";
import { redact } from "../util/secrets.js";
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
import type { BatchDisplay } from "./progress.js";
import { recordedResults, removeStaleTempFiles, restorePredictions } from "./recover.js";
import { type RunRecord, writeRunRecord } from "./run-record.js";
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
  /** Several Docker daemons (host-pool.ts); `workers` is then their sum. */
  hosts?: DockerHostConfig[];
  /** Where `hosts` came from, for messages (`--docker-host`, `environment.docker_hosts`). */
  hostsSource?: string;
  /** How often a down host is tried again, in ms (default 5000). */
  hostProbeMs?: number;
  /** An instance's image, so the pool can prefer a host that has it. */
  imageOf?: (instance: Instance) => string | undefined;
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
  const modelName = options.config.model.model_name || options.config.model.model_class;
  let preds: PredictionsFile;
  let results: ReturnType<typeof recordedResults>;
  let pool: HostPool | undefined;
  const previousRunId = previousRun(join(outputDir, "run.json"))?.runId;
  try {
    if (options.hosts && options.hosts.length > 0) {
      pool = await HostPool.open(options.hosts, options.hostsSource ?? "environment.docker_hosts", {
        say,
        onChange: (hosts) => display.hosts?.(hosts),
        runId: previousRunId || options.runId,
        ...(options.hostProbeMs ? { probeMs: options.hostProbeMs } : {}),
      });
    }
    preds = new PredictionsFile(join(outputDir, "preds.json"));
    results = recordedResults(outputDir);
    await recoverFolder(options, preds, results, modelName, say, pool);
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
  const previous = previousRecord(join(outputDir, "run.json"));
  const cases: Record<string, RunCase> = {};
  const record: RunRecord = {
    run_id: previous?.run_id ?? options.runId,
    label: options.label ?? previous?.label ?? null,
    status: "running",
    started_at: previous?.started_at ?? new Date().toISOString(),
    ended_at: null,
    swerun_version: swerunVersion(),
    model: modelName,
    subset: options.subset,
    split: options.split,
    instances: options.instances.length,
    exit_statuses: {},
    total_cost: 0,
    config: withoutSecrets({ ...options.config, model: { ...options.config.model, outputs: undefined } }),
    agent: agentSnapshot(options.config, options.imageTemplate ?? null),
    dataset: {
      subset: options.subset,
      split: options.split,
      slice: null,
      filter: null,
      instance_ids: null,
      shuffle: false,
      ...options.dataset,
    },
    cases,
    totals: sumMetrics([]),
    ...(pool ? { hosts: hostRecord(pool) } : {}),
  };
  // A resumed batch keeps its run id: its containers carry it, so a later resume or `cleanup --run-id` finds them.
  const runId = record.run_id;
  // Instances that finished before (a resumed batch) keep their case; one recorded nowhere is read from its trajectory.
  for (const [status, ids] of statuses) {
    for (const id of ids) {
      const earlier = previous?.cases?.[id];
      cases[id] = earlier && earlier.exit_status === status ? earlier : readCase(outputDir, id, status);
    }
  }
  const saveRecord = () => {
    record.exit_statuses = Object.fromEntries([...statuses].map(([status, ids]) => [status, ids.length]));
    const all = Object.values(cases);
    record.totals = sumMetrics(all.map((c) => c.behaviorMetrics));
    record.total_cost = Math.round(all.reduce((sum, c) => sum + c.cost, 0) * 1e6) / 1e6;
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

  const scheduler = new Scheduler(queue, pool, options.imageOf);
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
      log(`${instance.instance_id}: start (worker ${number}${hostName ? `, Docker host ${hostName}` : ""})`);
      const bus = new EventBus();
      bus.subscribe((event) => display.event(number, event));
      bus.subscribe((event) => {
        if (event.type === "action_start") chaosPoint("action-start");
        if (event.type === "model_retry")
          log(`${instance.instance_id}: model retry ${event.attempt}: ${event.error}`);
      });
      mkdirSync(join(outputDir, instance.instance_id), { recursive: true });
      const result: InstanceResult = await runInstance(instance, {
        config,
        outputDir,
        runId,
        bus,
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
      if (result.lost) {
        log(
          `${instance.instance_id}: lost with Docker host ${hostName} (${result.exit_status}, cost ${result.cost.toFixed(4)}, ${result.api_calls} calls): queued again`,
        );
        display.instanceLost?.(number, instance.instance_id);
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
        ...readCase(outputDir, result.instance_id, result.exit_status, result.cost),
        ...(hostName ? { host: hostName } : {}),
      };
      saveRecord();
      log(
        `${result.instance_id}: ${result.exit_status} (cost ${result.cost.toFixed(4)}, ${result.api_calls} calls)`,
      );
      display.instanceEnd(number, result, (Date.now() - started) / 1000);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, workers) }, (_, i) => worker(i + 1)));
  } finally {
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

/**
 * Undoes what a killed earlier run of the folder left: temp files of interrupted writes, its Docker
 * containers, and preds.json entries that lag behind the trajectories. Says what it did.
 */
async function recoverFolder(
  options: BatchOptions,
  preds: PredictionsFile,
  results: ReturnType<typeof recordedResults>,
  modelName: string,
  say: (line: string) => void,
  pool?: HostPool,
): Promise<void> {
  const { outputDir } = options;
  const temps = removeStaleTempFiles(outputDir);
  if (temps.length > 0)
    say(`Removed ${temps.length} temp file(s) of interrupted writes: ${temps.join(", ")}`);
  const previous = previousRun(join(outputDir, "run.json"));
  const usesDocker = [previous?.environmentClass, options.config.environment.environment_class].includes(
    "docker",
  );
  if (previous?.runId && options.removeContainers && usesDocker) {
    try {
      const hosts = pool?.hosts.filter((host) => host.up).map((host) => host.docker.config);
      const removed = await options.removeContainers(previous.runId, hosts);
      if (removed.length > 0) {
        say(`Removed ${removed.length} Docker container(s) left by the earlier run ${previous.runId}:`);
        for (const line of removed) say(`  ${line}`);
      }
    } catch (error) {
      say(
        `Could not look for Docker containers left by the earlier run ${previous.runId} (${error instanceof Error ? error.message : String(error)}); remove them later with: swerun cleanup --run-id ${previous.runId}`,
      );
    }
    const elsewhere = previous.hosts.filter(
      (host) => !pool?.hosts.some((known) => known.docker.name === host),
    );
    if (elsewhere.length > 0) {
      say(
        `The earlier run ${previous.runId} also ran on Docker hosts this batch does not use; remove what it left there with: swerun cleanup --run-id ${previous.runId} ${elsewhere.map((host) => `--docker-host ${host}`).join(" ")}`,
      );
    }
  }
  const restored = restorePredictions(preds, results, modelName);
  if (restored.length > 0) {
    say(
      `preds.json: restored ${restored.length} entr${restored.length === 1 ? "y" : "ies"} from finished trajectories (the earlier run was stopped before recording them): ${restored.join(", ")}`,
    );
  }
}

/** The run id, environment class and Docker hosts in the folder's run.json, if an earlier run wrote one. */
function previousRun(path: string): { runId: string; environmentClass: string; hosts: string[] } | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const record = JSON.parse(readFileSync(path, "utf8"));
    return {
      runId: typeof record.run_id === "string" ? record.run_id : "",
      environmentClass: String(record.config?.environment?.environment_class ?? ""),
      hosts: Array.isArray(record.hosts)
        ? record.hosts.map((entry: { host?: unknown }) => String(entry.host))
        : [],
    };
  } catch {
    return undefined;
  }
}

/** The run.json a previous process left in the folder (a resumed batch keeps its id, label, start and cases). */
function previousRecord(path: string): Partial<RunRecord> | undefined {
  try {
    const record = JSON.parse(readFileSync(path, "utf8"));
    return typeof record === "object" && record !== null ? record : undefined;
  } catch {
    return undefined;
  }
}

/** An instance's case, read from its trajectory once it has ended. */
function readCase(outputDir: string, id: string, status: string, cost?: number): RunCase {
  let trajectory: unknown = {};
  try {
    trajectory = JSON.parse(readFileSync(trajectoryPath(outputDir, id), "utf8"));
  } catch {
    // no trajectory (an instance that failed before it wrote one): the case records the status alone
  }
  const result = caseFromTrajectory(trajectory);
  result.exit_status = status;
  if (cost !== undefined && result.cost === 0) result.cost = Math.round(cost * 10000) / 10000;
  return result;
}

/** run.json's `hosts`: each Docker host of the pool, its workers, and whether it answered last. */
function hostRecord(pool: HostPool): RunRecord["hosts"] {
  return pool.status().map(({ host, workers, state }) => ({ host, workers, state }));
}
