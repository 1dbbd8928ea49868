import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { removeStaleTemps } from "../util/atomic-write.js";
import { trajectoryPath } from "./instance.js";
import type { PredictionsFile } from "./predictions.js";

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
    let info: Record<string, unknown>;
    try {
      info = JSON.parse(readFileSync(path, "utf8")).info ?? {};
    } catch {
      continue;
    }
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
      model_name: String(model.model_name || model.model_class || ""),
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

/** Removes the temp files that interrupted atomic writes left in the folder and its instance folders. */
export function removeStaleTempFiles(outputDir: string): string[] {
  const removed = removeStaleTemps(outputDir);
  let entries: string[] = [];
  try {
    entries = readdirSync(outputDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return removed;
  }
  for (const name of entries)
    removed.push(...removeStaleTemps(join(outputDir, name)).map((file) => join(name, file)));
  return removed;
}
