import { appendFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { stringify as toYaml } from "yaml";
import type { Agent } from "../agent/agent.js";
import type { SwerunConfig } from "../config/schema.js";
import { EventBus } from "../events.js";
import type { SwarmEventStream, SwarmIds } from "../run/swarm-events.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { timestampSlug } from "../util/ids.js";
import { swerunVersion } from "../util/package-root.js";
import { withoutSecrets } from "../util/sanitize.js";
import { redact } from "../util/secrets.js";
import type { Instance } from "./dataset.js";
import {
  FINISHED_STATUSES,
  type InstanceContext,
  type InstanceResult,
  recordedStatus,
  runInstance,
} from "./instance.js";
import { lockOutputDir } from "./lock.js";
import { PredictionsFile } from "./predictions.js";
import type { BatchDisplay } from "./progress.js";
import { type RunRecord, writeRunRecord } from "./run-record.js";

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
  display: BatchDisplay;
  prepare: InstanceContext["prepare"];
  /**
   * Event streams (`--events`): the batch is the root swarm (its run id), each instance a child swarm
   * `<run id>/<instance id>`.
   */
  eventStreams?: (ids: SwarmIds, options?: { swarmName?: string }) => SwarmEventStream;
}

export interface BatchSummary {
  statuses: Map<string, string[]>;
  cost: number;
  interrupted: boolean;
}

/**
 * Runs instances on `workers` parallel workers in this process and keeps the outputs of the folder
 * up to date after every instance: trajectories, preds.json, a log, run.json. First Ctrl-C: no new
 * instances start; second Ctrl-C or SIGTERM: running ones stop with exit status Interrupted.
 */
export async function runBatch(options: BatchOptions): Promise<BatchSummary> {
  const { outputDir, display } = options;
  const release = lockOutputDir(outputDir);
  const logPath = join(outputDir, "swerun.log");
  const log = (line: string) => appendFileSync(logPath, `${new Date().toISOString()} ${redact(line)}\n`);
  const preds = new PredictionsFile(join(outputDir, "preds.json"));
  const modelName = options.config.model.model_name || options.config.model.model_class;
  const statuses = new Map<string, string[]>();
  const note = (status: string, id: string) => statuses.set(status, [...(statuses.get(status) ?? []), id]);
  const root = options.eventStreams?.(
    { swarmId: options.runId, executionId: options.runId },
    { swarmName: options.label ?? options.subset },
  );
  root?.start();
  const swarmTotals = { tokens: 0, errors: 0, agents: new Set<string>() };
  const queue: Instance[] = [];
  for (const instance of options.instances) {
    const previous = recordedStatus(outputDir, instance.instance_id);
    if (!options.redoExisting && previous && FINISHED_STATUSES.has(previous)) {
      note(previous, instance.instance_id);
      root?.emit("instance_skipped", {
        instance_id: instance.instance_id,
        exit_status: previous,
        reason: "finished in an earlier run (--redo-existing runs it again)",
      });
    } else queue.push(instance);
  }
  const record: RunRecord = {
    run_id: options.runId,
    label: options.label ?? null,
    status: "running",
    started_at: new Date().toISOString(),
    ended_at: null,
    swerun_version: swerunVersion(),
    model: modelName,
    subset: options.subset,
    split: options.split,
    instances: options.instances.length,
    exit_statuses: {},
    total_cost: 0,
    config: withoutSecrets({ ...options.config, model: { ...options.config.model, outputs: undefined } }),
  };
  const saveRecord = () => {
    record.exit_statuses = Object.fromEntries([...statuses].map(([status, ids]) => [status, ids.length]));
    writeRunRecord(join(outputDir, "run.json"), record);
  };
  saveRecord();
  log(
    `run ${options.runId}: ${queue.length} to run, ${options.instances.length - queue.length} finished before, ${options.workers} workers`,
  );
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

  const worker = async (number: number) => {
    for (;;) {
      if (stopping > 0) return;
      const instance = queue.shift();
      if (!instance) return;
      const started = Date.now();
      display.instanceStart(number, instance.instance_id);
      log(`${instance.instance_id}: start (worker ${number})`);
      const bus = new EventBus();
      bus.subscribe((event) => display.event(number, event));
      bus.subscribe((event) => {
        if (event.type === "model_retry")
          log(`${instance.instance_id}: model retry ${event.attempt}: ${event.error}`);
      });
      const swarm = options.eventStreams?.({
        swarmId: `${options.runId}/${instance.instance_id}`,
        parentSwarmId: options.runId,
        executionId: options.runId,
      });
      if (swarm) {
        swarm.start(instance.problem_statement);
        bus.subscribe(swarm.listener);
      }
      mkdirSync(join(outputDir, instance.instance_id), { recursive: true });
      const result: InstanceResult = await runInstance(instance, {
        config: options.config,
        outputDir,
        runId: options.runId,
        bus,
        prepare: options.prepare,
        onAgent: (agent) => {
          if (agent) {
            agents.set(number, agent);
            if (stopping >= 2) agent.stop("Interrupted");
          } else agents.delete(number);
        },
      });
      preds.set({
        model_name_or_path: modelName,
        instance_id: result.instance_id,
        model_patch: result.submission,
      });
      note(result.exit_status, result.instance_id);
      record.total_cost += result.cost;
      if (swarm) {
        swarm.emit("instance_end", {
          instance_id: result.instance_id,
          exit_status: result.exit_status,
          cost: result.cost,
          api_calls: result.api_calls,
          patch_bytes: Buffer.byteLength(result.submission, "utf8"),
          duration: Math.round(Date.now() - started) / 1000,
        });
        swarm.stop({
          success: result.exit_status === "Submitted",
          totalCost: result.cost,
          error: result.error,
        });
        swarmTotals.tokens += swarm.totals.tokens;
        if (result.error !== undefined) swarmTotals.errors += 1;
        for (const agent of swarm.totals.agents) swarmTotals.agents.add(agent);
      }
      saveRecord();
      log(
        `${result.instance_id}: ${result.exit_status} (cost ${result.cost.toFixed(4)}, ${result.api_calls} calls)`,
      );
      display.instanceEnd(number, result, (Date.now() - started) / 1000);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, options.workers) }, (_, i) => worker(i + 1)));
  } finally {
    process.off("SIGINT", onSigint);
    process.off("SIGTERM", stopAll);
    display.stop();
    const byStatus = Object.fromEntries([...statuses].map(([status, ids]) => [status, [...ids].sort()]));
    writeFileAtomic(join(outputDir, `exit_statuses_${timestampSlug()}.yaml`), [
      toYaml({ instances_by_exit_status: byStatus }),
    ]);
    record.status = stopping > 0 ? "interrupted" : "finished";
    record.ended_at = new Date().toISOString();
    saveRecord();
    root?.stop({
      success: stopping === 0 && swarmTotals.errors === 0,
      content: `${record.status}: ${Object.entries(record.exit_statuses)
        .map(([status, count]) => `${status} ${count}`)
        .join(", ")}`,
      totalCost: record.total_cost,
      totalTokens: swarmTotals.tokens,
      agentsInvolved: [...swarmTotals.agents],
    });
    log(`run ${options.runId}: ${record.status}`);
    release();
  }
  return { statuses, cost: record.total_cost, interrupted: stopping > 0 };
}
