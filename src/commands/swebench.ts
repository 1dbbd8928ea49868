import { dirname, extname, join, resolve } from "node:path";
import pc from "picocolors";
import { type DockerHostConfig, parseDockerHostFlag } from "../config/docker-hosts.js";
import { type ConfigOverride, loadConfig } from "../config/load.js";
import type { SwerunConfig } from "../config/schema.js";
import { UserError } from "../errors.js";
import { globalModelStats } from "../models/global-stats.js";
import { runBatch } from "../swebench/batch.js";
import type { BatchImages } from "../swebench/batch-images.js";
import { type Checkout, materializeFixture, worktreeAtBase } from "../swebench/checkout.js";
import { type Instance, loadInstances } from "../swebench/dataset.js";
import { checkImageTemplate, DEFAULT_IMAGE_TEMPLATE, imageName } from "../swebench/image-name.js";
import { plainDisplay, terminalDisplay } from "../swebench/progress.js";
import { readRunRecord } from "../swebench/run-record.js";
import { parseSize } from "../util/bytes.js";
import { newRunId, timestampSlug } from "../util/ids.js";
import { outputDirProblem } from "../util/output-dir.js";
import { packageRoot } from "../util/package-root.js";
import { labelSlug } from "../util/printable.js";
import { redact } from "../util/secrets.js";
import { openEventLog } from "./event-log.js";
import { checkLabel } from "./label.js";
import { asList } from "./run.js";

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

export const DEMO_DATASET = () => join(packageRoot(), "config", "swebench-demo", "instances.json");

/** The dataset path or name, with `demo` standing for the bundled instances. */
export function datasetSource(subset: string): string {
  return subset === "demo" ? DEMO_DATASET() : subset;
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

/** Sets each instance's image (Docker) or makes its local checkout (local environment). */
export function instancePreparer(flags: SwebenchFlags, datasetDir: string | undefined) {
  const template = flags.imageTemplate ?? DEFAULT_IMAGE_TEMPLATE;
  checkImageTemplate(template);
  return async (config: SwerunConfig, instance: Instance): Promise<Checkout | undefined> => {
    if (config.environment.environment_class === "docker") {
      config.environment.image = imageName(instance, template);
      if (instance.fixture && datasetDir) {
        const { ensureFixtureImage } = await import("../images/fixture-image.js");
        const { configEndpoint } = await import("../environments/docker/client.js");
        await ensureFixtureImage(
          config.environment.image,
          instance,
          datasetDir,
          configEndpoint(config.environment),
        );
      }
      return undefined;
    }
    let checkout: Checkout;
    if (flags.repoDir) checkout = worktreeAtBase(instance, flags.repoDir);
    else if (instance.fixture && datasetDir) checkout = materializeFixture(instance, datasetDir);
    else {
      throw new UserError(
        `${instance.instance_id}: the local environment needs a checkout of ${String(instance.repo ?? "the repository")}: pass --repo-dir <clone>`,
      );
    }
    config.environment.cwd = checkout.dir;
    return checkout;
  };
}

export function datasetDirOf(subset: string): string | undefined {
  const source = datasetSource(subset);
  return [".json", ".jsonl", ".parquet"].includes(extname(source).toLowerCase())
    ? dirname(resolve(source))
    : undefined;
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

/** Refuses an output folder that cannot be written (a file in the way, no permission) before any instance runs. */
export function checkOutputDir(dir: string, flag = "-o"): void {
  const problem = outputDirProblem(dir);
  if (problem) throw new UserError(`${flag} ${dir}: ${problem}`);
}

/**
 * `SWERUN_DOCKER_HOST_TIMEOUT` (seconds): how long a Docker host of a pool that runs instances may take to
 * answer a ping before it is down (default 30 s); undefined when unset.
 */
export function hostAnswerTimeoutMs(): number | undefined {
  const value = process.env.SWERUN_DOCKER_HOST_TIMEOUT;
  if (value === undefined || value === "") return undefined;
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new UserError(
      `SWERUN_DOCKER_HOST_TIMEOUT (from environment): expected seconds > 0, got "${value}"`,
    );
  return seconds * 1000;
}

/** Exit code of a batch that stopped because every Docker host was down (resumable). */
export const HOSTS_DOWN_EXIT_CODE = 3;

/**
 * The Docker hosts of a batch: `--docker-host` flags (they replace the config's), else
 * `environment.docker_hosts`; none means DOCKER_HOST's daemon with `-w` workers.
 */
export function batchHosts(
  flags: SwebenchFlags,
  config: SwerunConfig,
): { hosts: DockerHostConfig[]; source: string } | undefined {
  const given = asList(flags.dockerHost);
  const environment = config.environment;
  const docker = environment.environment_class === "docker";
  if (given.length > 0 && !docker)
    throw new UserError(
      "--docker-host: the hosts run Docker containers; it needs --environment-class docker",
    );
  const hosts = given.map((spec) => {
    try {
      return parseDockerHostFlag(spec);
    } catch (error) {
      throw new UserError(`--docker-host ${spec}: ${(error as Error).message}`);
    }
  });
  const seen = new Set<string>();
  for (const [index, host] of hosts.entries()) {
    if (seen.has(host.host))
      throw new UserError(
        `--docker-host ${given[index]}: ${host.host} is given twice (one entry per daemon)`,
      );
    seen.add(host.host);
  }
  if (hosts.length > 0) return { hosts, source: "--docker-host" };
  if (environment.environment_class === "docker" && environment.docker_hosts?.length)
    return { hosts: environment.docker_hosts, source: "environment.docker_hosts" };
  return undefined;
}

/**
 * How a Docker batch handles its images: the budget (`--image-budget`, else `environment.image_budget`),
 * pulls ahead (`--pull-workers`, default 2), images never removed (`--keep-image`). Instances with a
 * bundled fixture build their image here and pull nothing.
 */
export function batchImages(flags: SwebenchFlags, config: SwerunConfig): BatchImages | undefined {
  const pullWorkers = Number(flags.pullWorkers ?? 2);
  if (!Number.isInteger(pullWorkers) || pullWorkers < 0)
    throw new UserError(`--pull-workers: expected a whole number ≥ 0, got ${String(flags.pullWorkers)}`);
  const environment = config.environment;
  if (environment.environment_class !== "docker") {
    if (flags.imageBudget !== undefined)
      throw new UserError(
        "--image-budget: the budget is for Docker images; it needs --environment-class docker",
      );
    return undefined;
  }
  const given = flags.imageBudget ?? environment.image_budget;
  const source = flags.imageBudget !== undefined ? "--image-budget" : "environment.image_budget";
  const bytes = given === undefined ? undefined : parseSize(given);
  if (given !== undefined && bytes === undefined)
    throw new UserError(
      `${source} ${String(given)}: expected a size such as 120G, 1.5T, 500Gi or a number of bytes`,
    );
  const template = flags.imageTemplate ?? DEFAULT_IMAGE_TEMPLATE;
  return {
    budget: { ...(bytes !== undefined ? { bytes, text: String(given) } : {}), source },
    pullWorkers,
    keep: asList(flags.keepImage),
    imageOf: (instance) => (instance.fixture ? undefined : imageName(instance, template)),
  };
}

/** `swerun swebench`: a dataset (or a slice of it) in parallel workers, with preds.json kept up to date. */
export async function swebenchCommand(flags: SwebenchFlags): Promise<number> {
  let workers = Number(flags.workers ?? 1);
  if (!Number.isInteger(workers) || workers < 1)
    throw new UserError(`--workers: expected a whole number ≥ 1, got ${String(flags.workers)}`);
  if (flags.label !== undefined) checkLabel(String(flags.label), "--label");
  if (flags.output) checkOutputDir(resolve(flags.output));
  const { subset, say, config, instances } = await loadSwebench(flags);
  const pool = batchHosts(flags, config);
  const answerTimeout = hostAnswerTimeoutMs();
  const images = batchImages(flags, config);
  if (pool) {
    if (flags.workers !== undefined)
      throw new UserError(
        `--workers: with ${pool.source} each host has its own worker count (URL:N); the total is their sum`,
      );
    workers = pool.hosts.reduce((sum, host) => sum + host.workers, 0);
  }
  const model = redact(config.model.model_name || config.model.model_class).replace(/[^\w.-]+/g, "_");
  const shard = flags.shard ? `-shard-${flags.shard.trim().replace(/\s*\/\s*/, "-of-")}` : "";
  const outputDir = resolve(
    flags.output ??
      join(
        "runs",
        `${timestampSlug()}-${flags.label !== undefined ? labelSlug(String(flags.label)) : model}${shard}`,
      ),
  );
  if (!flags.output) checkOutputDir(outputDir);
  const events = await openEventLog(flags.events, [config.model]);
  // A resumed batch keeps its run id (runBatch reads it too): the grading containers carry it from the start.
  const runId = readRunRecord(join(outputDir, "run.json"))?.run_id || newRunId();
  const tty = Boolean(process.stderr.isTTY) && !flags.quiet;
  const display = tty ? terminalDisplay(process.stderr, workers) : plainDisplay(say, flags);
  const grader = flags.eval
    ? await (await import("./swebench-eval.js")).startBatchGrading({
        instances,
        subset,
        split: flags.split ?? "test",
        imageTemplate: flags.imageTemplate,
        folder: outputDir,
        runId,
        modelName: config.model.model_name || config.model.model_class,
        workers,
        ...(pool ? { hosts: pool.hosts, hostsSource: pool.source } : {}),
        say: (line) => display.message(line),
      })
    : undefined;
  const summary = await runBatch({
    ...(answerTimeout ? { hostAnswerTimeoutMs: answerTimeout } : {}),
    ...(events ? { eventStreams: events.stream } : {}),
    instances,
    config,
    outputDir,
    workers,
    redoExisting: Boolean(flags.redoExisting),
    runId,
    label: flags.label,
    subset,
    split: flags.split ?? "test",
    dataset: {
      slice: flags.slice ?? null,
      filter: flags.filter ?? null,
      instance_ids: flags.instanceIds ?? null,
      shuffle: Boolean(flags.shuffle),
      shard: flags.shard?.replace(/\s+/g, "") ?? null,
    },
    imageTemplate: flags.imageTemplate ?? DEFAULT_IMAGE_TEMPLATE,
    display,
    prepare: instancePreparer(flags, datasetDirOf(subset)),
    removeContainers: async (runId, hosts) =>
      (await import("./cleanup.js")).removeLeftoverContainers(runId, hosts),
    ...(pool ? { hosts: pool.hosts, hostsSource: pool.source } : {}),
    imageOf: (instance) => imageName(instance, flags.imageTemplate ?? DEFAULT_IMAGE_TEMPLATE),
    ...(images ? { images } : {}),
    ...(grader
      ? {
          onInstanceEnd: (result, host) => grader.submit(result.instance_id, result.submission, host),
          onInstanceStart: (id, host) => grader.prepareEarly(id, host),
          onInstanceRunning: (id, host) => grader.prepare(id, host),
          onInstanceSubmitted: (id, submission, host) => grader.submitted(id, submission, host),
          onInstanceLost: (id) => grader.lost(id),
        }
      : {}),
  }).finally(() => events?.close());
  const counts = [...summary.statuses].map(([status, ids]) => `${status} ${ids.length}`).join(", ");
  process.stdout.write(`${pc.bold("exit statuses:")} ${counts || "none"}\n`);
  process.stdout.write(`${pc.bold("total cost:")} $${summary.cost.toFixed(4)}\n`);
  process.stdout.write(`${pc.bold("predictions:")} ${join(outputDir, "preds.json")}\n`);
  if (grader) await grader.finish();
  if (summary.hostsDown) return HOSTS_DOWN_EXIT_CODE;
  return summary.interrupted ? 130 : 0;
}
