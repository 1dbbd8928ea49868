import { existsSync, readdirSync, rmSync } from "node:fs";
import { join, relative } from "node:path";
import type { DockerHostConfig } from "../config/docker-hosts.js";
import { modelDisplayName } from "../config/model.js";
import type { PredictionsFile } from "../datasets/predictions.js";
import type { RunRecord } from "../formats/run-json.js";
import type { HostPool } from "../images/host-pool.js";
import { journalPath } from "../trajectory/journal.js";
import { readTrajectoryInfo } from "../trajectory/reader.js";
import { removeStaleTemps } from "../util/atomic-write.js";
import { trajectoryPath } from "./instance.js";

/**
 * What a batch finds in its folder when it starts: an earlier run may have been killed at any moment.
 * Trajectories are the record of what finished (each is renamed into place only when its instance
 * ends); preds.json, the log and run.json follow them and may lag one instance behind.
 */

/** How an instance ended, as its trajectory in the folder records it. */
export interface RecordedResult {
  instance_id: string;
  exit_status: string;
  submission: string;
  model_name: string;
}

/** The results recorded by the trajectories `<dir>/<id>/<id>.traj.json` of an output folder, by id. */
export function recordedResults(outputDir: string): Map<string, RecordedResult> {
  const results = new Map<string, RecordedResult>();
  let entries: string[];
  try {
    entries = readdirSync(outputDir);
  } catch {
    return results;
  }
  for (const id of entries.sort()) {
    const path = trajectoryPath(outputDir, id);
    if (!existsSync(path)) continue;
    const info = readTrajectoryInfo(path);
    if (!info) continue;
    const exitStatus = info.exit_status;
    if (typeof exitStatus !== "string" || !exitStatus) continue;
    const model = ((info.config as Record<string, unknown> | undefined)?.model ?? {}) as Record<
      string,
      unknown
    >;
    results.set(id, {
      instance_id: id,
      exit_status: exitStatus,
      submission: typeof info.submission === "string" ? info.submission : "",
      model_name: modelDisplayName(model),
    });
  }
  return results;
}

/**
 * Makes preds.json agree with the trajectories: an instance whose trajectory is in place but whose
 * entry is missing or holds another patch (the run was killed between the two writes) gets its entry
 * from the trajectory. Writes preds.json once if anything changed; returns the ids restored.
 */
export function restorePredictions(
  preds: PredictionsFile,
  results: Map<string, RecordedResult>,
  fallbackModel: string,
): string[] {
  const restored: string[] = [];
  for (const result of results.values()) {
    const entry = preds.entries.get(result.instance_id);
    if (entry && entry.model_patch === result.submission) continue;
    preds.entries.set(result.instance_id, {
      model_name_or_path: result.model_name || entry?.model_name_or_path || fallbackModel,
      instance_id: result.instance_id,
      model_patch: result.submission,
    });
    restored.push(result.instance_id);
  }
  if (restored.length > 0) preds.write();
  return restored;
}

/**
 * Removes the partial trajectories (`<id>.traj.json.partial`) and undo journals (`.partial.undo`) that
 * earlier runs of the folder left: a killed instance's, or one whose trajectory could not be written. The
 * folder is locked, so no running instance owns them; an instance that runs again starts a new one.
 * Returns their paths under the folder.
 */
export function removeLeftoverPartials(outputDir: string): string[] {
  const removed: string[] = [];
  for (const id of instanceFolders(outputDir)) {
    const partial = `${trajectoryPath(outputDir, id)}.partial`;
    for (const path of [partial, journalPath(partial)]) {
      if (!existsSync(path)) continue;
      try {
        rmSync(path, { force: true });
        removed.push(relative(outputDir, path));
      } catch {
        // a folder that cannot be written keeps it: the next start tries again
      }
    }
  }
  return removed;
}

function instanceFolders(outputDir: string): string[] {
  try {
    return readdirSync(outputDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}

/** Removes the temp files that interrupted atomic writes left in the folder and its instance folders. */
export function removeStaleTempFiles(outputDir: string): string[] {
  const removed = removeStaleTemps(outputDir);
  for (const name of instanceFolders(outputDir))
    removed.push(...removeStaleTemps(join(outputDir, name)).map((file) => join(name, file)));
  return removed;
}

/** What `recoverFolder` needs to know of a batch that starts. */
export interface FolderToRecover {
  outputDir: string;
  /** The run.json the earlier run left, if any. */
  previous: Partial<RunRecord> | undefined;
  /** This batch's environment class. */
  environmentClass: string;
  preds: PredictionsFile;
  results: Map<string, RecordedResult>;
  modelName: string;
  say: (line: string) => void;
  pool?: HostPool | undefined;
  removeContainers?: ((runId: string, hosts?: DockerHostConfig[]) => Promise<string[]>) | undefined;
  /** Kubernetes: deletes the pods and run ConfigMaps of run `runId`; one line per object. */
  removePods?: ((runId: string) => Promise<string[]>) | undefined;
}

/**
 * Undoes what a killed earlier run of the folder left: temp files of interrupted writes, its Docker
 * containers, and preds.json entries that lag behind the trajectories. Says what it did.
 */
export async function recoverFolder(folder: FolderToRecover): Promise<void> {
  const { outputDir, say, pool, preds } = folder;
  const temps = removeStaleTempFiles(outputDir);
  if (temps.length > 0)
    say(`Removed ${temps.length} temp file(s) of interrupted writes: ${temps.join(", ")}`);
  const partials = removeLeftoverPartials(outputDir);
  if (partials.length > 0)
    say(
      `Removed ${partials.length} partial trajectory file(s) and undo journal(s) of runs that did not end or could not be saved: ${partials.join(", ")}`,
    );
  const previous = earlierRun(folder.previous);
  const usesDocker = [previous?.environmentClass, folder.environmentClass].includes("docker");
  if (previous?.runId && folder.removeContainers && usesDocker) {
    try {
      const hosts = pool?.hosts.filter((host) => host.up).map((host) => host.docker.config);
      const removed = await folder.removeContainers(previous.runId, hosts);
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
  const usesKubernetes = [previous?.environmentClass, folder.environmentClass].includes("kubernetes");
  if (previous?.runId && folder.removePods && usesKubernetes) {
    try {
      const removed = await folder.removePods(previous.runId);
      if (removed.length > 0) {
        say(`Deleted ${removed.length} Kubernetes object(s) left by the earlier run ${previous.runId}:`);
        for (const line of removed) say(`  ${line}`);
      }
    } catch (error) {
      say(
        `Could not look for pods left by the earlier run ${previous.runId} (${error instanceof Error ? error.message : String(error)}); delete them later with: swerun cleanup --kubernetes --run-id ${previous.runId}`,
      );
    }
  }
  const restored = restorePredictions(preds, folder.results, folder.modelName);
  if (restored.length > 0) {
    say(
      `preds.json: restored ${restored.length} entr${restored.length === 1 ? "y" : "ies"} from finished trajectories (the earlier run was stopped before recording them): ${restored.join(", ")}`,
    );
  }
}

/** The run id, environment class and Docker hosts of the folder's earlier run.json. */
function earlierRun(
  record: Partial<RunRecord> | undefined,
): { runId: string; environmentClass: string; hosts: string[] } | undefined {
  if (!record) return undefined;
  const config = record.config as { environment?: { environment_class?: unknown } } | undefined;
  return {
    runId: typeof record.run_id === "string" ? record.run_id : "",
    environmentClass: String(config?.environment?.environment_class ?? ""),
    hosts: Array.isArray(record.hosts) ? record.hosts.map((entry) => String(entry?.host)) : [],
  };
}
