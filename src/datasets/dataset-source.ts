import { dirname, extname, join, resolve } from "node:path";
import { packageRoot } from "../util/package-root.js";
import { datasetForSubset } from "./subsets.js";

/** The bundled demo instances (`--subset demo`). */
export const DEMO_DATASET = () => join(packageRoot(), "config", "swebench-demo", "instances.json");

/** The dataset path or name, with `demo` standing for the bundled instances. */
export function datasetSource(subset: string): string {
  return subset === "demo" ? DEMO_DATASET() : subset;
}

/** The folder of a dataset file (its fixtures sit beside it), or undefined for a hub dataset. */
export function datasetDirOf(subset: string): string | undefined {
  const source = datasetSource(subset);
  return [".json", ".jsonl", ".parquet"].includes(extname(source).toLowerCase())
    ? dirname(resolve(source))
    : undefined;
}

/**
 * The dataset as the run's metadata records it, so that a re-grade finds it again from anywhere: a hub
 * short name as its hub dataset (as the harness records its aliases), a local file as its absolute path.
 */
export function recordedDatasetName(subset: string): string {
  if (datasetForSubset(subset)) return datasetForSubset(subset) as string;
  return [".json", ".jsonl", ".parquet"].includes(extname(subset).toLowerCase()) ? resolve(subset) : subset;
}
