import { join, resolve } from "node:path";
import pc from "picocolors";
import { runBatch } from "../batch/batch.js";
import type { BatchOptions, BatchSummary } from "../batch/batch-options.js";
import { type BatchDisplay, plainDisplay, terminalDisplay } from "../batch/display.js";
import type { BatchImages } from "../batch/images.js";
import { loadSwebench, type SwebenchSelection } from "../batch/load.js";
import { outputFailureLine } from "../batch/log.js";
import { type DockerHostConfig, parseDockerHostFlag } from "../config/docker-hosts.js";
import type { ConfigOverride } from "../config/load.js";
import { modelDisplayName } from "../config/model.js";
import type { SwerunConfig } from "../config/schema.js";
import type { Instance } from "../datasets/dataset.js";
import { datasetDirOf } from "../datasets/dataset-source.js";
import { DEFAULT_IMAGE_TEMPLATE, imageName } from "../datasets/image-name.js";
import { UserError } from "../errors.js";
import { usd } from "../facts/figures.js";
import { instancePreparer } from "../fixture-images/instance-preparer.js";
import { readRunRecord, runJsonPath } from "../formats/run-json.js";
import { openEventLog } from "../run/event-log.js";
import { checkOutputDir } from "../run/output.js";
import { checkLabel } from "../tracking/label.js";
import { asList } from "../util/as-list.js";
import { parseSize } from "../util/bytes.js";
import { newRunId, timestampSlug } from "../util/ids.js";
import { labelSlug } from "../util/printable.js";
import { redact } from "../util/secrets.js";
import { configOverrides, type FlagsOf } from "./options.js";

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
  request: SwebenchRequest,
  config: SwerunConfig,
): { hosts: DockerHostConfig[]; source: string } | undefined {
  const given = request.dockerHosts ?? [];
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
export function batchImages(request: SwebenchRequest, config: SwerunConfig): BatchImages | undefined {
  const pullWorkers = wholeNumber(request.pullWorkers ?? 2, "--pull-workers", 0);
  const environment = config.environment;
  if (environment.environment_class !== "docker") {
    if (request.imageBudget !== undefined)
      throw new UserError(
        "--image-budget: the budget is for Docker images; it needs --environment-class docker",
      );
    return undefined;
  }
  const given = request.imageBudget ?? environment.image_budget;
  const source = request.imageBudget !== undefined ? "--image-budget" : "environment.image_budget";
  const bytes = given === undefined ? undefined : parseSize(given);
  if (given !== undefined && bytes === undefined)
    throw new UserError(
      `${source} ${String(given)}: expected a size such as 120G, 1.5T, 500Gi or a number of bytes`,
    );
  const template = request.imageTemplate ?? DEFAULT_IMAGE_TEMPLATE;
  return {
    budget: { ...(bytes !== undefined ? { bytes, text: String(given) } : {}), source },
    pullWorkers,
    keep: request.keepImages ?? [],
    imageOf: (instance) => (instance.fixture ? undefined : imageName(instance, template)),
  };
}

/** `swerun swebench` flags (commands/options.ts). */
export type SwebenchFlags = FlagsOf<"swebench">;

/**
 * A SWE-bench batch as `swerun swebench` runs it: each field is the command's flag of that name, typed (see the
 * README's "SWE-bench"). Everything is optional: the default is the Lite dataset with the built-in `swebench`
 * config, one worker, in `runs/<time>-<label or model>`.
 */
export interface SwebenchRequest extends SwebenchSelection {
  /** `-c`: config files, built-in names or `key.path=value`, in order. */
  config?: string[];
  /** Overrides applied after `config` (the command's `--model`, `--environment-class`, ... become these). */
  overrides?: ConfigOverride[];
  /** `-w`: parallel workers (default 1; with Docker hosts, their sum). */
  workers?: number;
  /** `--docker-host url[:workers]`: the Docker daemons to spread the instances over. */
  dockerHosts?: string[];
  /** `-o`: the run folder (a folder with a run.json is resumed). */
  output?: string;
  /** `--redo-existing`: run instances again even when they finished before. */
  redoExisting?: boolean;
  /** `--label`: a label for the run (run.json; `swerun runs`). */
  label?: string;
  /** `--image-template`: how an instance's image is named. */
  imageTemplate?: string;
  /** `--repo-dir`: a clone of the repository, for the local environment's checkouts. */
  repoDir?: string;
  /** `--verbose`: every step of every instance (plain display only). */
  verbose?: boolean;
  /** `--events`: the JSON lines event stream's file. */
  events?: string;
  /** `--eval`: grade each instance in its container as it ends. */
  eval?: boolean;
  /** `--image-budget`: how much disk the instances' images may take (e.g. `120G`). */
  imageBudget?: string;
  /** `--pull-workers`: images pulled ahead at once (default 2). */
  pullWorkers?: number;
  /** `--keep-image`: images never removed. */
  keepImages?: string[];
}

/** A whole number ≥ `min` given to a flag (the flag's value may be text cac could not read as a number). */
function wholeNumber(value: unknown, flag: string, min: number): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < min)
    throw new UserError(`${flag}: expected a whole number ≥ ${min}, got ${String(value)}`);
  return number;
}

/** `swerun swebench`'s flags as a request, the numbers checked (the flags below commands/ end here). */
export function swebenchRequest(flags: SwebenchFlags): SwebenchRequest {
  const { subset, split, slice, filter, shuffle, instanceIds, shard, quiet, output, label } = flags;
  const { redoExisting, imageTemplate, repoDir, verbose, events, imageBudget } = flags;
  const request: SwebenchRequest = {
    ...{ subset, split, slice, filter, shuffle, instanceIds, shard, quiet, output, label },
    ...{ redoExisting, imageTemplate, repoDir, verbose, events, eval: flags.eval, imageBudget },
    config: asList(flags.config),
    overrides: configOverrides("swebench", flags),
    dockerHosts: asList(flags.dockerHost),
    keepImages: asList(flags.keepImage),
  };
  if (flags.workers !== undefined) request.workers = wholeNumber(flags.workers, "--workers", 1);
  if (flags.pullWorkers !== undefined)
    request.pullWorkers = wholeNumber(flags.pullWorkers, "--pull-workers", 0);
  return request;
}

/** With a pool of Docker hosts, the workers are the sum of the hosts' worker counts (and `-w` is refused). */
function poolWorkers(request: SwebenchRequest, pool: { hosts: DockerHostConfig[]; source: string }): number {
  if (request.workers !== undefined)
    throw new UserError(
      `--workers: with ${pool.source} each host has its own worker count (URL:N); the total is their sum`,
    );
  return pool.hosts.reduce((sum, host) => sum + host.workers, 0);
}

/** `-o`, else `runs/<time>-<label or model>[-shard-i-of-n]`, checked. */
function batchFolder(request: SwebenchRequest, config: SwerunConfig): string {
  if (request.output) return resolve(request.output);
  const model = redact(modelDisplayName(config.model)).replace(/[^\w.-]+/g, "_");
  const name = request.label !== undefined ? labelSlug(String(request.label)) : model;
  const shard = request.shard ? `-shard-${request.shard.trim().replace(/\s*\/\s*/, "-of-")}` : "";
  const folder = resolve(join("runs", `${timestampSlug()}-${name}${shard}`));
  checkOutputDir(folder);
  return folder;
}

/** What a batch ended with, and where its folder is (trajectories, preds.json, run.json; `eval/` with `eval`). */
export interface SwebenchResult extends BatchSummary {
  outputDir: string;
}

/** `swerun swebench`: a dataset (or a slice of it) in parallel workers, with preds.json kept up to date. */
export async function swebenchCommand(flags: SwebenchFlags): Promise<number> {
  const result = await runSwebench(swebenchRequest(flags), printBatchEnd);
  if (result.outputFailure) return 1;
  if (result.hostsDown) return HOSTS_DOWN_EXIT_CODE;
  return result.interrupted ? 130 : 0;
}

/**
 * Runs a SWE-bench batch as `swerun swebench` does (progress on standard error, Ctrl-C as the command's) and
 * returns its summary. `onBatchEnd` is told it when the agents are done, before an `eval` grading finishes.
 */
export async function runSwebench(
  request: SwebenchRequest,
  onBatchEnd?: (summary: BatchSummary, outputDir: string) => void,
): Promise<SwebenchResult> {
  const workersGiven = wholeNumber(request.workers ?? 1, "--workers", 1);
  if (request.label !== undefined) checkLabel(String(request.label), "--label");
  if (request.output) checkOutputDir(resolve(request.output));
  const { subset, say, config, instances } = await loadSwebench(request, request.overrides ?? []);
  // Again now that the config's own credentials (model_kwargs.api_key, ...) are known, before the folder is named.
  if (request.label !== undefined) checkLabel(String(request.label), "--label");
  const pool = batchHosts(request, config);
  const answerTimeout = hostAnswerTimeoutMs();
  const images = batchImages(request, config);
  const workers = pool ? poolWorkers(request, pool) : workersGiven;
  const outputDir = batchFolder(request, config);
  const events = await openEventLog(request.events, [config.model]);
  // A resumed batch keeps its run id (runBatch reads it too): the grading containers carry it from the start.
  const runId = readRunRecord(runJsonPath(outputDir))?.run_id || newRunId();
  const tty = Boolean(process.stderr.isTTY) && !request.quiet;
  const display = tty
    ? terminalDisplay(process.stderr, workers)
    : plainDisplay(say, { quiet: request.quiet, verbose: request.verbose });
  const grader = request.eval
    ? await startGrading(request, { instances, subset, config, outputDir, runId, workers, pool, display })
    : undefined;
  const imageTemplate = request.imageTemplate ?? DEFAULT_IMAGE_TEMPLATE;
  const summary = await runBatch({
    ...(answerTimeout ? { hostAnswerTimeoutMs: answerTimeout } : {}),
    ...(events ? { eventStreams: events.stream } : {}),
    ...{ instances, config, outputDir, workers, runId, subset, display, imageTemplate },
    redoExisting: Boolean(request.redoExisting),
    label: request.label,
    split: request.split ?? "test",
    dataset: datasetSelection(request),
    prepare: instancePreparer({ imageTemplate, repoDir: request.repoDir }, datasetDirOf(subset)),
    removeContainers: async (runId, hosts) =>
      (await import("../environments/docker/cleanup.js")).removeLeftoverContainers(runId, hosts),
    removePods: async (runId) => {
      const environment = config.environment;
      if (environment.environment_class !== "kubernetes") return [];
      return (await import("../environments/kubernetes/cleanup.js")).removeLeftoverPods(runId, environment);
    },
    ...(pool ? { hosts: pool.hosts, hostsSource: pool.source } : {}),
    imageOf: (instance) => imageName(instance, imageTemplate),
    ...(images ? { images } : {}),
    ...(grader ? grader.hooks : {}),
  }).finally(() => events?.close());
  onBatchEnd?.(summary, outputDir);
  if (grader) await grader.finish();
  return { ...summary, outputDir };
}

/** `--eval`: the grading that follows the batch, its instances graded as they end. */
async function startGrading(
  request: SwebenchRequest,
  batch: {
    instances: Instance[];
    subset: string;
    config: SwerunConfig;
    outputDir: string;
    runId: string;
    workers: number;
    pool: { hosts: DockerHostConfig[]; source: string } | undefined;
    display: BatchDisplay;
  },
) {
  const { config, pool, display } = batch;
  return (await import("../batch/grading.js")).startBatchGrading({
    instances: batch.instances,
    subset: batch.subset,
    split: request.split ?? "test",
    imageTemplate: request.imageTemplate,
    folder: batch.outputDir,
    runId: batch.runId,
    modelName: modelDisplayName(config.model),
    workers: batch.workers,
    ...(pool ? { hosts: pool.hosts, hostsSource: pool.source } : {}),
    ...(config.environment.environment_class === "kubernetes" ? { kubernetes: config.environment } : {}),
    say: (line) => display.message(line),
  });
}

/** How the instances were selected, as run.json records it. */
function datasetSelection(request: SwebenchSelection): BatchOptions["dataset"] {
  return {
    slice: request.slice ?? null,
    filter: request.filter ?? null,
    instance_ids: request.instanceIds ?? null,
    shuffle: Boolean(request.shuffle),
    shard: request.shard?.replace(/\s+/g, "") ?? null,
  };
}

/**
 * The batch's last lines: its folder's exit statuses, cost and predictions; then, when an output could not
 * be written, the runs that were not saved (and what they cost) and the failure, on standard error.
 */
function printBatchEnd(summary: BatchSummary, outputDir: string): void {
  const counts = [...summary.statuses].map(([status, ids]) => `${status} ${ids.length}`).join(", ");
  process.stdout.write(`${pc.bold("exit statuses:")} ${counts || "none"}\n`);
  process.stdout.write(`${pc.bold("total cost:")} ${usd(summary.cost)}\n`);
  process.stdout.write(`${pc.bold("predictions:")} ${join(outputDir, "preds.json")}\n`);
  const unsaved = summary.unsaved ?? [];
  if (unsaved.length > 0) {
    const kept = unsaved.filter((entry) => entry.kept).length;
    const cost = unsaved.reduce((sum, entry) => sum + entry.cost, 0);
    process.stderr.write(
      `${pc.bold("not saved:")} ${unsaved.length} run(s) of this batch (${unsaved.map((entry) => entry.instance_id).join(", ")}; $${cost.toFixed(4)} spent on them)${kept > 0 ? `; ${kept} kept their earlier trajectory, counted above` : ""}\n`,
    );
  }
  if (summary.outputFailure) process.stderr.write(`${outputFailureLine(summary.outputFailure, outputDir)}\n`);
}
