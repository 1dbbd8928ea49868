import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import pc from "picocolors";
import { modelDisplayName } from "../config/model.js";
import { loadInstances } from "../datasets/dataset.js";
import { datasetSource } from "../datasets/dataset-source.js";
import { type Prediction, patchProblem } from "../datasets/predictions.js";
import { UserError } from "../errors.js";
import { consoleToStderr } from "../run/event-log.js";
import { checkOutputFile } from "../run/output.js";
import { checkShards } from "../tracking/shards.js";
import { readRun } from "../tracking/store.js";
import { readTrajectoryJson } from "../trajectory/reader.js";
import { writeOutput } from "../util/output-file.js";
import { redact, redactedJson, registerSecret } from "../util/secrets.js";
import type { FlagsOf } from "./options.js";

/** `swerun preds` flags (commands/options.ts). */
export type PredsFlags = FlagsOf<"preds">;

interface Found {
  prediction: Prediction;
  exitStatus: string;
  /** When the run that wrote it ended: the last message's timestamp, else the file's mtime. */
  time: number;
  path: string;
}

function trajectoryFiles(path: string): string[] {
  if (!existsSync(path)) throw new UserError(`${path}: no such file or folder`);
  if (statSync(path).isFile()) return [path];
  const files: string[] = [];
  for (const entry of readdirSync(path, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(".traj.json")) files.push(join(entry.parentPath, entry.name));
  }
  return files;
}

function readTrajectory(path: string): Found {
  const data = readTrajectoryJson(path) as Record<string, unknown>;
  const info = (data.info ?? {}) as Record<string, unknown>;
  const config = (info.config ?? {}) as {
    model?: { model_name?: string; model_class?: string };
    environment?: { forward_env?: unknown };
  };
  // The values of the variables the run forwarded into its environment are secrets here too.
  const forwarded = config.environment?.forward_env;
  if (Array.isArray(forwarded)) for (const name of forwarded) registerSecret(process.env[String(name)]);
  const id =
    typeof data.instance_id === "string"
      ? data.instance_id
      : path.replace(/^.*\//, "").replace(/\.traj\.json$/, "");
  const messages = Array.isArray(data.messages)
    ? (data.messages as Array<{ extra?: { timestamp?: number } }>)
    : [];
  const stamps = messages
    .map((message) => message.extra?.timestamp)
    .filter((t): t is number => typeof t === "number");
  return {
    prediction: {
      model_name_or_path: modelDisplayName(config.model) || "unknown",
      instance_id: id,
      model_patch: typeof info.submission === "string" ? info.submission : "",
    },
    exitStatus: typeof info.exit_status === "string" ? info.exit_status : "",
    time: stamps.length ? Math.max(...stamps) : statSync(path).mtimeMs / 1000,
    path,
  };
}

/**
 * `swerun preds <run folders or trajectories...>`: predictions rebuilt from trajectories (the newest per
 * instance wins, so shards and reruns merge), patches checked as unified diffs, counts printed.
 */
export async function predsCommand(paths: string[], flags: PredsFlags): Promise<number> {
  if (paths.length === 0) throw new UserError("give one or more run folders or .traj.json files");
  const output = flags.output ? checkOutputFile(flags.output, "-o") : undefined;
  if (output === "-") consoleToStderr();
  if (flags.mergeShards) checkShardFolders(paths);
  const entries = newestPredictions(paths);
  const invalid = entries
    .map((entry) => ({ entry, problem: patchProblem(entry.prediction.model_patch) }))
    .filter((item) => item.problem);
  for (const { entry, problem } of invalid) {
    process.stderr.write(
      `${pc.yellow("invalid patch")} ${entry.prediction.instance_id} (${entry.path}): ${problem}\n`,
    );
  }
  if (flags.dataset) await checkDataset(entries, flags.dataset, flags.split);
  printCounts(entries, invalid.length);
  if (output) {
    writePredictions(
      output,
      entries.map((entry) => entry.prediction),
    );
    if (output !== "-") process.stdout.write(`wrote ${output}\n`);
  }
  return invalid.length > 0 ? 1 : 0;
}

/** `--merge-shards`: the folders are runs, no shard is given twice, and the missing shards are said. */
function checkShardFolders(paths: string[]): void {
  const runs = paths.map((path) => {
    const run = readRun(resolve(path));
    if (!run) throw new UserError(`--merge-shards: ${path}: not a run folder (no run.json)`);
    return run;
  });
  const { count, missing, twice } = checkShards(runs);
  if (twice.length > 0)
    throw new UserError(`--merge-shards: shard ${twice.join(", ")} of ${count} given twice`);
  process.stderr.write(
    missing.length > 0
      ? `${pc.yellow("shards missing:")} ${missing.map((i) => `${i}/${count}`).join(", ")} (their instances are not in the predictions)\n`
      : `all ${count} shards of the run\n`,
  );
}

/** The newest trajectory of each instance under the paths, sorted by instance id. */
function newestPredictions(paths: string[]): Found[] {
  const newest = new Map<string, Found>();
  for (const path of paths) {
    for (const file of trajectoryFiles(resolve(path))) {
      const found = readTrajectory(file);
      const previous = newest.get(found.prediction.instance_id);
      if (!previous || found.time >= previous.time) newest.set(found.prediction.instance_id, found);
    }
  }
  return [...newest.values()].sort((a, b) => (a.prediction.instance_id < b.prediction.instance_id ? -1 : 1));
}

/** `--dataset`: every instance id belongs to it. */
async function checkDataset(entries: Found[], dataset: string, split: string | undefined): Promise<void> {
  const instances = await loadInstances({ subset: datasetSource(dataset), split });
  const ids = new Set(instances.map((i) => i.instance_id));
  const unknown = entries
    .filter((entry) => !ids.has(entry.prediction.instance_id))
    .map((e) => e.prediction.instance_id);
  if (unknown.length) {
    throw new UserError(
      `${unknown.length} instance ids are not in ${dataset}: ${unknown.slice(0, 10).join(", ")}`,
    );
  }
}

function printCounts(entries: Found[], invalid: number): void {
  const byStatus = new Map<string, number>();
  for (const entry of entries)
    byStatus.set(entry.exitStatus || "(none)", (byStatus.get(entry.exitStatus || "(none)") ?? 0) + 1);
  const submitted = entries.filter((entry) => entry.exitStatus === "Submitted").length;
  const empty = entries.filter((entry) => !entry.prediction.model_patch.trim()).length;
  process.stdout.write(
    `${entries.length} instances: ${submitted} submitted, ${empty} with an empty patch, ${invalid} with an invalid patch\n`,
  );
  process.stdout.write(
    `by exit status: ${[...byStatus].map(([status, n]) => `${status} ${n}`).join(", ")}\n`,
  );
}

/** `-o`: a JSON object by instance id, or JSON lines for a `.jsonl` path; secrets redacted. */
function writePredictions(output: string, predictions: Prediction[]): void {
  const text = output.endsWith(".jsonl")
    ? redact(predictions.map((p) => JSON.stringify(p)).join("\n") + (predictions.length ? "\n" : ""))
    : redactedJson(Object.fromEntries(predictions.map((p) => [p.instance_id, p])));
  writeOutput(output, [text]);
}
