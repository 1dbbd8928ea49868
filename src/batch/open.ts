import { join } from "node:path";
import { modelDisplayName } from "../config/model.js";
import type { Instance } from "../datasets/dataset.js";
import { PredictionsFile } from "../datasets/predictions.js";
import { readRunRecord, runJsonPath } from "../formats/run-json.js";
import { HostPool } from "../images/host-pool.js";
import { FileWriteError, fileWriteError } from "../util/file-error.js";
import type { BatchOptions } from "./batch-options.js";
import { openBatchImages } from "./images.js";
import { FINISHED_STATUSES } from "./instance.js";
import { lockOutputDir } from "./lock.js";
import { batchLog } from "./log.js";
import { recordedResults, recoverFolder } from "./recover.js";
import { Scheduler } from "./scheduler.js";

/** What `openBatch` finds and opens before the first instance starts. */
export interface OpenedBatch {
  release: () => void;
  log: (line: string) => void;
  say: (line: string) => void;
  /** An output that could not be written: said once (the first), and no new instance starts after it. */
  failed: (error: FileWriteError) => void;
  /** The first output that could not be written, if one was not. */
  failure: () => FileWriteError | undefined;
  /** Runs a write of the batch's outputs; one that fails is said (the first) and stops new instances. */
  guard: (path: string, write: () => void) => boolean;
  previous: ReturnType<typeof readRunRecord>;
  pool: HostPool | undefined;
  preds: PredictionsFile;
  results: ReturnType<typeof recordedResults>;
  statuses: Map<string, string[]>;
  queue: Instance[];
  scheduler: Scheduler;
  images: Awaited<ReturnType<typeof openBatchImages>>;
}

/**
 * Locks the folder, opens the pool of hosts, recovers what an earlier run left (recover.ts), sorts the
 * instances into finished before and queued, and opens the batch's images; on failure releases it all.
 */
export async function openBatch(options: BatchOptions): Promise<OpenedBatch> {
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
    const guard = (path: string, write: () => void) => guardWrite(failed, path, write);
    return {
      release,
      log,
      say,
      failed,
      failure,
      guard,
      previous,
      pool,
      preds,
      results,
      statuses,
      queue,
      scheduler,
      images,
    };
  } catch (error) {
    pool?.close();
    release();
    throw error;
  }
}

/** Runs `write`; an error writing a file goes to `failed` (false), any other is thrown. */
function guardWrite(failed: (error: FileWriteError) => void, path: string, write: () => void): boolean {
  try {
    write();
    return true;
  } catch (error) {
    if (!(error instanceof FileWriteError) && (error as NodeJS.ErrnoException).code === undefined)
      throw error;
    failed(fileWriteError(path, error));
    return false;
  }
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

/** Notes an instance's exit status among the batch's statuses. */
export function noteStatus(statuses: Map<string, string[]>, status: string, id: string): void {
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
