import { join, resolve } from "node:path";
import pc from "picocolors";
import { type BatchOptions, type BatchSummary, runBatch } from "../batch/batch.js";
import { plainDisplay, terminalDisplay } from "../batch/display.js";
import type { BatchImages } from "../batch/images.js";
import { loadSwebench } from "../batch/load.js";
import { outputFailureLine } from "../batch/log.js";
import { type DockerHostConfig, parseDockerHostFlag } from "../config/docker-hosts.js";
import { modelDisplayName } from "../config/model.js";
import type { SwerunConfig } from "../config/schema.js";
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

/** `swerun swebench` flags (commands/options.ts). */
export type SwebenchFlags = FlagsOf<"swebench">;

/** `-w`, checked before anything loads. */
function workersFlag(flags: SwebenchFlags): number {
  const workers = Number(flags.workers ?? 1);
  if (!Number.isInteger(workers) || workers < 1)
    throw new UserError(`--workers: expected a whole number ≥ 1, got ${String(flags.workers)}`);
  return workers;
}

/** With a pool of Docker hosts, the workers are the sum of the hosts' worker counts (and `-w` is refused). */
function poolWorkers(flags: SwebenchFlags, pool: { hosts: DockerHostConfig[]; source: string }): number {
  if (flags.workers !== undefined)
    throw new UserError(
      `--workers: with ${pool.source} each host has its own worker count (URL:N); the total is their sum`,
    );
  return pool.hosts.reduce((sum, host) => sum + host.workers, 0);
}

/** `-o`, else `runs/<time>-<label or model>[-shard-i-of-n]`, checked. */
function batchFolder(flags: SwebenchFlags, config: SwerunConfig): string {
  if (flags.output) return resolve(flags.output);
  const model = redact(modelDisplayName(config.model)).replace(/[^\w.-]+/g, "_");
  const name = flags.label !== undefined ? labelSlug(String(flags.label)) : model;
  const shard = flags.shard ? `-shard-${flags.shard.trim().replace(/\s*\/\s*/, "-of-")}` : "";
  const folder = resolve(join("runs", `${timestampSlug()}-${name}${shard}`));
  checkOutputDir(folder);
  return folder;
}

/** `swerun swebench`: a dataset (or a slice of it) in parallel workers, with preds.json kept up to date. */
export async function swebenchCommand(flags: SwebenchFlags): Promise<number> {
  const workersGiven = workersFlag(flags);
  if (flags.label !== undefined) checkLabel(String(flags.label), "--label");
  if (flags.output) checkOutputDir(resolve(flags.output));
  const { subset, say, config, instances } = await loadSwebench(flags, configOverrides("swebench", flags));
  // Again now that the config's own credentials (model_kwargs.api_key, ...) are known, before the folder is named.
  if (flags.label !== undefined) checkLabel(String(flags.label), "--label");
  const pool = batchHosts(flags, config);
  const answerTimeout = hostAnswerTimeoutMs();
  const images = batchImages(flags, config);
  const workers = pool ? poolWorkers(flags, pool) : workersGiven;
  const outputDir = batchFolder(flags, config);
  const events = await openEventLog(flags.events, [config.model]);
  // A resumed batch keeps its run id (runBatch reads it too): the grading containers carry it from the start.
  const runId = readRunRecord(runJsonPath(outputDir))?.run_id || newRunId();
  const tty = Boolean(process.stderr.isTTY) && !flags.quiet;
  const display = tty ? terminalDisplay(process.stderr, workers) : plainDisplay(say, flags);
  const grader = flags.eval
    ? await (await import("../batch/grading.js")).startBatchGrading({
        instances,
        subset,
        split: flags.split ?? "test",
        imageTemplate: flags.imageTemplate,
        folder: outputDir,
        runId,
        modelName: modelDisplayName(config.model),
        workers,
        ...(pool ? { hosts: pool.hosts, hostsSource: pool.source } : {}),
        ...(config.environment.environment_class === "kubernetes" ? { kubernetes: config.environment } : {}),
        say: (line) => display.message(line),
      })
    : undefined;
  const imageTemplate = flags.imageTemplate ?? DEFAULT_IMAGE_TEMPLATE;
  const summary = await runBatch({
    ...(answerTimeout ? { hostAnswerTimeoutMs: answerTimeout } : {}),
    ...(events ? { eventStreams: events.stream } : {}),
    ...{ instances, config, outputDir, workers, runId, subset, display, imageTemplate },
    redoExisting: Boolean(flags.redoExisting),
    label: flags.label,
    split: flags.split ?? "test",
    dataset: datasetSelection(flags),
    prepare: instancePreparer(flags, datasetDirOf(subset)),
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
  printBatchEnd(summary, outputDir);
  if (grader) await grader.finish();
  if (summary.outputFailure) return 1;
  if (summary.hostsDown) return HOSTS_DOWN_EXIT_CODE;
  return summary.interrupted ? 130 : 0;
}

/** How the instances were selected, as run.json records it. */
function datasetSelection(flags: SwebenchFlags): BatchOptions["dataset"] {
  return {
    slice: flags.slice ?? null,
    filter: flags.filter ?? null,
    instance_ids: flags.instanceIds ?? null,
    shuffle: Boolean(flags.shuffle),
    shard: flags.shard?.replace(/\s+/g, "") ?? null,
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
