import { translateRunArgs } from "../config/docker-run-args.js";
import type { DockerEnvironmentConfig, SwerunConfig } from "../config/schema.js";
import type { Instance } from "../datasets/dataset.js";
import { configEndpoint, hostEndpoint } from "../environments/docker/client.js";
import type { ImagesRecord } from "../formats/run-json.js";
import type { HostPool, PoolHost } from "../images/host-pool.js";
import { ImagePool, type ImagePoolOptions, type ImagesStatus, type PoolDaemon } from "../images/pool.js";
import { type BudgetSetting, imagePreflight } from "../images/preflight.js";
import type { BatchDisplay } from "./display.js";
import type { Scheduler } from "./scheduler.js";

/** How a Docker batch handles its images (`--image-budget`, `--pull-workers`, `--keep-image`). */
export interface BatchImages {
  budget: BudgetSetting;
  /** Pulls ahead at once per daemon (default 2; 0: no pulling ahead). */
  pullWorkers: number;
  /** Images never removed. */
  keep: string[];
  /** The image an instance pulls; undefined for one whose image is built here. */
  imageOf: (instance: Instance) => string | undefined;
}

/** What the batch hands the images. */
export interface BatchImagesContext {
  queue: Instance[];
  scheduler: Scheduler;
  /** Workers on DOCKER_HOST's daemon (without a host pool). */
  workers: number;
  pool: HostPool | undefined;
  runId: string;
  folder: string;
  previous?: Partial<ImagesRecord>;
  say: (line: string) => void;
  log: (line: string) => void;
}

/** The batch's side of its image pool. */
export interface BatchImagesHandle {
  readonly record: ImagesRecord;
  /** Pulling ahead begins; `save` (run.json) and the display follow every change. */
  started(save: () => void, display: BatchDisplay): void;
  ready(instance: Instance, host?: PoolHost): Promise<void>;
  ended(instance: Instance, host?: PoolHost): void;
  /** A grading's image outside its instance, through the pool (see `ImagePool.hold`). */
  hold: HoldImage;
  close(): Promise<void>;
}

/** Gets `image` on the daemon at `hostAddress` (the batch's daemon without one) through the batch's images; resolves with the function that lets it go. */
export type HoldImage = (image: string, hostAddress?: string) => Promise<() => void>;

/** The daemons a batch runs on: each host of its pool, or DOCKER_HOST's daemon with the batch's workers. */
function batchDaemons(environment: DockerEnvironmentConfig, context: BatchImagesContext): PoolDaemon[] {
  if (!context.pool)
    return [{ endpoint: configEndpoint(environment), workers: Math.max(1, context.workers) }];
  return context.pool.hosts.map((host) => ({
    endpoint: hostEndpoint(host.docker.config),
    workers: host.docker.workers,
    host,
  }));
}

/** The pool's options from the batch's settings and its environment (pull timeout, `--platform`). */
function poolOptions(environment: DockerEnvironmentConfig, images: BatchImages): ImagePoolOptions {
  const { platform } = translateRunArgs(environment.run_args, {
    allowPrivileged: environment.allow_privileged,
  });
  return {
    ...(images.budget.bytes !== undefined ? { budget: images.budget.bytes } : {}),
    pullWorkers: images.pullWorkers,
    keep: images.keep,
    imageOf: images.imageOf,
    pullTimeout: environment.pull_timeout,
    ...(platform ? { platform } : {}),
  };
}

/**
 * Where the pool's changes go: the display at once, run.json (`save`) at most once a second (it is also
 * saved as each instance ends; the ledger keeps every pull). Both are known once the batch starts.
 */
class ImagesOutlet {
  display: BatchDisplay | undefined;
  save: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  changed(status: ImagesStatus): void {
    this.display?.images?.(status);
    if (this.#timer || this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.save?.();
    }, 1000);
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
  }
}

/**
 * The images of a Docker batch (none for other environments, or without `images`): opens the image pool on
 * the batch's daemons and runs the preflight (a UserError before any model call when the disk cannot hold
 * the batch). Pulling ahead starts with `started`.
 */
export async function openBatchImages(
  settings: { config: SwerunConfig; images?: BatchImages },
  context: BatchImagesContext,
): Promise<BatchImagesHandle | undefined> {
  const images = settings.images;
  const environment = settings.config.environment;
  if (!images || environment.environment_class !== "docker") return undefined;
  const outlet = new ImagesOutlet();
  const imagePool = await ImagePool.open(
    batchDaemons(environment, context),
    poolOptions(environment, images),
    {
      runId: context.runId,
      folder: context.folder,
      queue: () => context.scheduler.queued,
      taken: () => context.scheduler.taken,
      ...(context.previous ? { previous: context.previous } : {}),
      say: context.say,
      onChange: () => outlet.changed(imagePool.status()),
    },
  );
  try {
    context.log(await imagePreflight(imagePool, context.queue, images.budget));
  } catch (error) {
    await imagePool.close();
    throw error;
  }
  return {
    record: imagePool.record,
    started: (save, display) => {
      outlet.save = save;
      outlet.display = display;
      display.images?.(imagePool.status());
      if (images.pullWorkers > 0) imagePool.start();
    },
    ready: (instance, host) => imagePool.ready(instance, host),
    ended: (instance, host) => imagePool.ended(instance, host),
    hold: (image, hostAddress) => imagePool.hold(image, hostAddress),
    close: async () => {
      await imagePool.close();
      outlet.close();
    },
  };
}
