import { existsSync, readFileSync } from "node:fs";
import { parsePatch } from "diff";
import { UserError } from "../errors.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { redactedJson } from "../util/secrets.js";

/** One entry of preds.json, as the SWE-bench harness and sb-cli read it. */
export interface Prediction {
  model_name_or_path: string;
  instance_id: string;
  model_patch: string;
}

/** preds.json: an object keyed by instance id, rewritten atomically after every change, secrets redacted. */
export class PredictionsFile {
  readonly path: string;
  readonly entries = new Map<string, Prediction>();

  constructor(path: string) {
    this.path = path;
    if (existsSync(path)) {
      for (const prediction of readPredictions(path)) this.entries.set(prediction.instance_id, prediction);
    }
  }

  set(prediction: Prediction): void {
    this.entries.set(prediction.instance_id, prediction);
    this.write();
  }

  write(): void {
    const object = Object.fromEntries([...this.entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    writeFileAtomic(this.path, [redactedJson(object)]);
  }
}

/** Reads a predictions file in any of the harness's shapes: object keyed by id, list, or JSON lines. */
export function readPredictions(path: string): Prediction[] {
  const text = readFileSync(path, "utf8");
  let data: unknown;
  try {
    data = path.endsWith(".jsonl")
      ? text
          .split("\n")
          .filter((line) => line.trim())
          .map((line) => JSON.parse(line))
      : JSON.parse(text);
  } catch (error) {
    throw new UserError(`${path}: not valid JSON: ${(error as Error).message}`);
  }
  const list = Array.isArray(data)
    ? data
    : typeof data === "object" && data
      ? Object.values(data)
      : undefined;
  if (!list)
    throw new UserError(`${path}: expected an object keyed by instance id, or a list of predictions`);
  return list.map((entry, index) => {
    const record = entry as Partial<Prediction>;
    for (const key of ["instance_id", "model_name_or_path", "model_patch"] as const) {
      if (typeof record[key] !== "string") {
        throw new UserError(
          `${path}: prediction ${index} (${String(record.instance_id)}): ${key} must be a string`,
        );
      }
    }
    return record as Prediction;
  });
}

/** Why a non-empty patch is not a usable unified diff, or undefined when it is one. */
export function patchProblem(patch: string): string | undefined {
  if (!patch.trim()) return undefined;
  let files: ReturnType<typeof parsePatch>;
  try {
    files = parsePatch(patch);
  } catch (error) {
    return (error as Error).message;
  }
  const withHunks = files.filter(
    (file) => file.hunks.length > 0 || /^(rename|new file|deleted file|Binary)/m.test(patch),
  );
  if (withHunks.length === 0) return "no file diffs with hunks found";
  for (const file of files) {
    for (const hunk of file.hunks) {
      const removed = hunk.lines.filter((line) => line.startsWith("-") || line.startsWith(" ")).length;
      const added = hunk.lines.filter((line) => line.startsWith("+") || line.startsWith(" ")).length;
      if (removed !== hunk.oldLines || added !== hunk.newLines) {
        return `hunk @@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@ in ${file.newFileName ?? file.oldFileName}: line counts do not match its header`;
      }
    }
  }
  return undefined;
}
