import { existsSync, readFileSync } from "node:fs";
import { pythonJson } from "../python/json-dumps-indent.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { pathInside } from "../util/safe-path.js";
import { LOG_FILES, RUN_EVALUATION_DIR } from "./harness-constants.js";

/**
 * What an evaluation run graded against, as the harness 5.x keeps it in
 * `logs/run_evaluation/<run_id>/run.json`: a re-grade needs the dataset's test lists and parsers again.
 */
export interface RunMetadata {
  dataset: string;
  split: string;
  task_repo: string | null;
  /** ISO time in UTC to the second, as Python's `isoformat(timespec="seconds")` (`...+00:00`). */
  created_at: string;
}

/** `logs/run_evaluation/<run_id>/run.json` under `outputDir`. */
export function runMetadataPath(outputDir: string, runId: string): string {
  return pathInside(outputDir, ...RUN_EVALUATION_DIR, runId, LOG_FILES.runMetadata);
}

/** The metadata an earlier run recorded, or undefined (none, or not an object). */
export function readRunMetadata(outputDir: string, runId: string): Partial<RunMetadata> | undefined {
  const path = runMetadataPath(outputDir, runId);
  if (!existsSync(path)) return undefined;
  try {
    const value = JSON.parse(readFileSync(path, "utf8")) as unknown;
    return typeof value === "object" && value !== null ? (value as Partial<RunMetadata>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes the run's metadata as the harness does at the start of every run, re-grades included: dataset and
 * split as given, `created_at` now, and the task repo given, else the one recorded before (a re-grade names
 * none, and the record of which tests the run was graded against must not be lost). Written atomically, its
 * folder made first; a failure throws a FileWriteError naming run.json.
 */
export function writeRunMetadata(
  outputDir: string,
  runId: string,
  run: { dataset: string; split: string; task_repo?: string | null },
  now = new Date(),
): string {
  const path = runMetadataPath(outputDir, runId);
  const recorded = readRunMetadata(outputDir, runId)?.task_repo;
  const taskRepo = run.task_repo ?? (typeof recorded === "string" ? recorded : null);
  const metadata: RunMetadata = {
    dataset: run.dataset,
    split: run.split,
    task_repo: taskRepo,
    created_at: `${now.toISOString().slice(0, 19)}+00:00`,
  };
  writeFileAtomic(path, [`${pythonJson(metadata, 2)}\n`]);
  return path;
}
