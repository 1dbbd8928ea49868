import { type ConfigOverride, loadConfig } from "../config/load.js";
import type { SwerunConfig } from "../config/schema.js";
import { globalModelStats } from "../models/global-stats.js";
import { asList } from "../util/as-list.js";
import { loadInstances } from "./dataset.js";
import { datasetSource } from "./dataset-source.js";

/** `swerun swebench` and `swerun swebench-single` flags, as cac hands them over. */
export interface SwebenchFlags {
  subset?: string;
  split?: string;
  slice?: string;
  filter?: string;
  shuffle?: boolean;
  instanceIds?: string;
  workers?: number;
  output?: string;
  model?: string;
  modelClass?: string;
  environmentClass?: string;
  config?: string | string[];
  redoExisting?: boolean;
  label?: string;
  quiet?: boolean;
  verbose?: boolean;
  imageTemplate?: string;
  repoDir?: string;
  eval?: boolean;
  shard?: string;
  /** `--events PATH`: SwarmSDK-shaped JSON lines (`-`: standard output). */
  events?: string;
  /** `--docker-host URL[:workers]`, repeatable. */
  dockerHost?: string | string[];
  /** `--image-budget SIZE` (replaces environment.image_budget). */
  imageBudget?: string | number;
  /** `--pull-workers N` (default 2). */
  pullWorkers?: number | string;
  /** `--keep-image IMAGE`, repeatable. */
  keepImage?: string | string[];
}

/** Whether a Docker daemon answers (quietly; for choosing the demo's environment). */
async function dockerAnswers(): Promise<boolean> {
  try {
    const { connectDocker, closeDockerClient } = await import("../environments/docker/client.js");
    const docker = await connectDocker(undefined, 3000);
    closeDockerClient(docker);
    return true;
  } catch {
    return false;
  }
}

/**
 * The config of a SWE-bench run: the given `-c` specs (default: the built-in `swebench`, plus
 * `swebench-demo` for the demo when no model is named), then flags. The demo runs in Docker when a
 * daemon answers and in the local environment otherwise, saying so.
 */
export async function swebenchConfig(
  flags: SwebenchFlags,
  say: (line: string) => void,
): Promise<SwerunConfig> {
  const specs = asList(flags.config);
  const demo = flags.subset === "demo";
  const hasFile = specs.some((spec) => !/^[A-Za-z_][\w.-]*=/.test(spec));
  const base = hasFile
    ? []
    : ["swebench", ...(demo && !flags.model && !flags.modelClass ? ["swebench-demo"] : [])];
  let environmentClass = flags.environmentClass;
  if (demo && !environmentClass && !specs.some((spec) => spec.startsWith("environment.environment_class="))) {
    environmentClass = (await dockerAnswers()) ? "docker" : "local";
    if (environmentClass === "local")
      say("No Docker daemon answers: running the demo in the local environment.");
  }
  const overrides: ConfigOverride[] = [
    { path: "model.model_name", value: flags.model, origin: "--model" },
    { path: "model.model_class", value: flags.modelClass, origin: "--model-class" },
    { path: "environment.environment_class", value: environmentClass, origin: "--environment-class" },
  ];
  const config = loadConfig([...base, ...specs], overrides);
  if (config.environment.environment_class === "local" && config.environment.cwd === "/testbed") {
    config.environment.cwd = "";
  }
  return config;
}

/** The config and the selected instances of a SWE-bench command; progress lines go to stderr. */
export async function loadSwebench(flags: SwebenchFlags) {
  const subset = flags.subset ?? "lite";
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const config = await swebenchConfig({ ...flags, subset }, say);
  globalModelStats(); // a bad SWERUN_GLOBAL_* value is refused before any instance starts
  const instances = await loadInstances({
    subset: datasetSource(subset),
    split: flags.split,
    slice: flags.slice,
    filter: flags.filter,
    shuffle: flags.shuffle,
    instanceIds: flags.instanceIds,
    shard: flags.shard,
    onProgress: flags.quiet ? undefined : say,
  });
  return { subset, say, config, instances };
}
