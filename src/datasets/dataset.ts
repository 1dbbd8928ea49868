import { existsSync, readFileSync } from "node:fs";
import { extname } from "node:path";
import { UserError } from "../errors.js";
import { ID_MAX_BYTES, nameProblem, shownName } from "../util/safe-path.js";
import { hubParquetFiles, isHubDatasetId } from "./hub.js";
import { readParquetRows } from "./parquet.js";
import { type Selection, selectInstances } from "./select.js";
import { datasetForSubset, SUBSETS } from "./subsets.js";

/** One task of a SWE-bench-style dataset: the record as stored, of which two keys are required. */
export interface Instance {
  instance_id: string;
  problem_statement: string;
  [key: string]: unknown;
}

export interface LoadOptions extends Selection {
  /** A short name (`lite`, `verified`, ...), an `owner/name` Hugging Face dataset, or a .json/.jsonl/.parquet file. */
  subset: string;
  /** The split of a hub dataset (default `test`); a local file has no splits. */
  split?: string;
  /** Told about downloads and cache use, one line at a time. */
  onProgress?: (line: string) => void;
}

const FILE_EXTENSIONS = [".json", ".jsonl", ".parquet"];

/**
 * The instances of a dataset, selected as mini-swe-agent does (see `selectInstances`). Hub datasets are
 * downloaded as parquet into the cache once and read from there afterwards.
 */
export async function loadInstances(options: LoadOptions): Promise<Instance[]> {
  const { subset, split = "test", onProgress = () => {} } = options;
  const dataset = datasetForSubset(subset) ?? subset;
  let records: unknown[];
  let source: string;
  if (FILE_EXTENSIONS.includes(extname(subset).toLowerCase())) {
    records = await readDatasetFile(subset);
    source = subset;
  } else if (isHubDatasetId(dataset)) {
    records = [];
    for (const file of await hubParquetFiles(dataset, split, onProgress))
      records.push(...(await readParquetRows(file)));
    source = `${dataset} (${split})`;
  } else {
    throw new UserError(
      `unknown --subset "${subset}": use one of ${Object.keys(SUBSETS).join(", ")}, an owner/name Hugging Face ` +
        "dataset, or a .json, .jsonl or .parquet file",
    );
  }
  const instances = records.map((record, index) => checkRecord(record, index, source));
  onProgress(`Loaded ${instances.length} instances from ${source}`);
  const selected = selectInstances(instances, options);
  const indexes = new Map(instances.map((instance, index) => [instance, index]));
  for (const instance of selected)
    checkInstanceId(instance.instance_id, `${source}: record ${indexes.get(instance)}`);
  const repeated = repeatedIds(instances, new Set(selected.map((instance) => instance.instance_id)));
  if (repeated.length > 0) {
    const shown = repeated.slice(0, 10).map(([id, records]) => `${id} (records ${records.join(", ")})`);
    throw new UserError(
      `${source}: instance_id appears more than once: ${shown.join("; ")}${repeated.length > 10 ? `; and ${repeated.length - 10} more` : ""}; give each instance its own id`,
    );
  }
  return selected;
}

/**
 * Refuses an instance id that cannot be one folder and file name (it names both in the output folder, and
 * the grading's log folder): `..`, a `/`, a NUL, too long a name. `record` names where it came from.
 */
export function checkInstanceId(id: string, record: string): void {
  const problem = nameProblem(id, ID_MAX_BYTES);
  if (problem)
    throw new UserError(
      `${record}: instance_id ${shownName(id)} cannot name a folder or file (${problem}); an id is one safe file name`,
    );
}

/**
 * The ids that more than one instance has (only ids in `among`, when given), each with the indexes of its
 * records: two instances with one id would share a trajectory and a preds.json entry.
 */
export function repeatedIds(instances: Instance[], among?: Set<string>): Array<[string, number[]]> {
  const records = new Map<string, number[]>();
  for (const [index, instance] of instances.entries()) {
    if (among && !among.has(instance.instance_id)) continue;
    records.set(instance.instance_id, [...(records.get(instance.instance_id) ?? []), index]);
  }
  return [...records].filter(([, indexes]) => indexes.length > 1);
}

/** The records of a local .json (an array), .jsonl (one object per line) or .parquet file. */
export async function readDatasetFile(path: string): Promise<unknown[]> {
  if (!existsSync(path)) throw new UserError(`dataset file not found: ${path}`);
  const extension = extname(path).toLowerCase();
  if (extension === ".parquet") return readParquetRows(path);
  const text = readFileSync(path, "utf8");
  if (extension === ".jsonl") {
    const records: unknown[] = [];
    for (const [index, line] of text.split("\n").entries()) {
      if (line.trim() === "") continue;
      try {
        records.push(JSON.parse(line));
      } catch (error) {
        throw new UserError(`${path} line ${index + 1}: invalid JSON (${(error as Error).message})`);
      }
    }
    return records;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new UserError(`${path}: invalid JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(data)) throw new UserError(`${path}: expected a JSON array of instances`);
  return data;
}

function checkRecord(record: unknown, index: number, source: string): Instance {
  if (record === null || typeof record !== "object" || Array.isArray(record)) {
    throw new UserError(`${source}: record ${index} is not an object`);
  }
  const fields = record as Record<string, unknown>;
  if (typeof fields.instance_id !== "string" || fields.instance_id === "") {
    throw new UserError(`${source}: record ${index} has no instance_id`);
  }
  if (typeof fields.problem_statement !== "string") {
    throw new UserError(`${source}: record ${index} (${fields.instance_id}) has no problem_statement`);
  }
  return fields as Instance;
}
