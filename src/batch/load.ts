import { type ConfigOverride, loadConfig } from "../config/load.js";
import { onHostFiles, type SwerunConfig } from "../config/schema.js";
import { loadInstances } from "../datasets/dataset.js";
import { datasetSource } from "../datasets/dataset-source.js";
import { globalModelStats } from "../models/global-stats.js";
import { asList } from "../util/as-list.js";

/** What `swerun swebench` and `swerun swebench-single` load: the config specs and the instances to select. */
export interface SwebenchSelection {
  /** `-c`: config files, built-in names or key.path=value. */
  config?: string | string[];
  subset?: string;
  split?: string;
  slice?: string;
  filter?: string;
  shuffle?: boolean;
  instanceIds?: string;
  shard?: string;
  /** No progress lines while the dataset loads. */
  quiet?: boolean;
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
 * `swebench-demo` for the demo when no model is named), then the flags' overrides. The demo runs in Docker
 * when a daemon answers and in the local environment otherwise, saying so.
 */
export async function swebenchConfig(
  selection: SwebenchSelection,
  overrides: ConfigOverride[],
  say: (line: string) => void,
): Promise<SwerunConfig> {
  const specs = asList(selection.config);
  const demo = selection.subset === "demo";
  const given = (path: string) => overrides.some((override) => override.path === path && override.value);
  const hasFile = specs.some((spec) => !/^[A-Za-z_][\w.-]*=/.test(spec));
  const namesModel = given("model.model_name") || given("model.model_class");
  const base = hasFile ? [] : ["swebench", ...(demo && !namesModel ? ["swebench-demo"] : [])];
  const chosen = [...overrides];
  const environmentClass = "environment.environment_class";
  if (demo && !given(environmentClass) && !specs.some((spec) => spec.startsWith(`${environmentClass}=`))) {
    const docker = await dockerAnswers();
    chosen.push({ path: environmentClass, value: docker ? "docker" : "local", origin: "the demo" });
    if (!docker) say("No Docker daemon answers: running the demo in the local environment.");
  }
  const config = loadConfig([...base, ...specs], chosen);
  if (onHostFiles(config.environment) && config.environment.cwd === "/testbed") {
    config.environment.cwd = "";
  }
  return config;
}

/** The config and the selected instances of a SWE-bench command; progress lines go to stderr. */
export async function loadSwebench(selection: SwebenchSelection, overrides: ConfigOverride[]) {
  const subset = selection.subset ?? "lite";
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const config = await swebenchConfig({ ...selection, subset }, overrides, say);
  globalModelStats(); // a bad SWERUN_GLOBAL_* value is refused before any instance starts
  const instances = await loadInstances({
    subset: datasetSource(subset),
    split: selection.split,
    slice: selection.slice,
    filter: selection.filter,
    shuffle: selection.shuffle,
    instanceIds: selection.instanceIds,
    shard: selection.shard,
    onProgress: selection.quiet ? undefined : say,
  });
  return { subset, say, config, instances };
}
