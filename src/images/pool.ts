import type Docker from "dockerode";
import type { Instance } from "../datasets/dataset.js";
import { closeDockerClient, type DockerEndpoint } from "../environments/docker/client.js";
import { inspectImage, normalizeImage } from "../environments/docker/images.js";
import { isNoSpace } from "../environments/docker/pull.js";
import type { ImagesRecord } from "../formats/run-json.js";
import { ImageDemand } from "./demand.js";
import { ImageEviction } from "./eviction.js";
import type { PoolHost } from "./host-pool.js";
import { readLedger } from "./ledger.js";
import { type Daemon, openDaemon, PoolState } from "./pool-state.js";
import { PullAhead } from "./pull-ahead.js";
import { PullEstimates } from "./pull-estimates.js";
import { ImagePulls } from "./pulls.js";
import { watchContainerEnds } from "./users.js";

/** What the progress display shows of the images. */
export interface ImagesStatus {
  pulling: number;
  /** Pulled ahead, no instance started with them yet. */
  ready: number;
  pulledAhead: number;
  waited: number;
  waitedSeconds: number;
  /** Bytes held (all daemons) and the budget per daemon. */
  held: number;
  budget: number | undefined;
}

export interface ImagePoolOptions {
  /** Bytes of pulled images each daemon may hold; undefined keeps every image. */
  budget?: number;
  /** Pulls ahead at once, per daemon. */
  pullWorkers: number;
  /** Images never removed (`--keep-image`). */
  keep: string[];
  /** The image an instance pulls, or undefined when it has none to pull (built here, not in Docker). */
  imageOf: (instance: Instance) => string | undefined;
  pullTimeout: number;
  platform?: string;
}

/** A daemon the batch runs instances on. */
export interface PoolDaemon {
  endpoint: DockerEndpoint;
  workers: number;
  /** Its host-pool entry (and name, for messages and run.json) when the batch has a host pool. */
  host?: PoolHost;
}

/**
 * The images of a batch on its daemons: pulls the images of the next queued instances while the workers run
 * agents (pull-ahead.ts), so a worker finds its instance's image there; gets an instance's image when it
 * starts (pulls.ts), removing what the budget asks first (eviction.ts: least recently used images this batch
 * pulled that no queued or running instance needs). Never removes what was on a daemon before the batch,
 * images containers use, or `keep` images. Pull errors are left to the instance's own pull to report.
 */
export class ImagePool {
  readonly record: ImagesRecord;
  readonly #state: PoolState;
  readonly #demand: ImageDemand;
  readonly #estimates: PullEstimates;
  readonly #eviction: ImageEviction;
  readonly #pulls: ImagePulls;
  readonly #ahead: PullAhead;
  /** Holds of gradings so far (their keys). */
  #holds = 0;

  private constructor(
    daemons: Daemon[],
    options: ImagePoolOptions,
    context: ImagePoolContext,
    record: ImagesRecord,
  ) {
    this.#state = new PoolState(daemons, options, context, record);
    this.record = record;
    this.#demand = new ImageDemand(this.#state, context);
    this.#estimates = new PullEstimates(() => this.#ahead.fill());
    this.#eviction = new ImageEviction(this.#state, this.#demand);
    this.#pulls = new ImagePulls(this.#state, this.#estimates, this.#eviction);
    this.#ahead = new PullAhead(this.#state, {
      demand: this.#demand,
      estimates: this.#estimates,
      eviction: this.#eviction,
      pulls: this.#pulls,
    });
  }

  /**
   * Lists each daemon's images: what is there is kept, except what this run pulled before (`previous`, a
   * resumed batch), which counts against the budget again.
   */
  static async open(
    daemons: PoolDaemon[],
    options: ImagePoolOptions,
    context: ImagePoolContext,
  ): Promise<ImagePool> {
    const previous = context.previous;
    const ledger = readLedger(context.runId)?.images ?? [];
    const opened = await Promise.all(daemons.map((spec) => openDaemon(spec, options.budget, ledger)));
    const record: ImagesRecord = {
      budget_bytes: options.budget ?? null,
      pulled: previous?.pulled ?? [],
      pulled_ahead: previous?.pulled_ahead ?? [],
      waited: previous?.waited ?? [],
      removed: previous?.removed ?? [],
      peak_bytes: previous?.peak_bytes ?? 0,
    };
    const pool = new ImagePool(opened, options, context, record);
    for (const daemon of opened)
      daemon.unwatch = watchContainerEnds(daemon.docker, () => pool.#containerEnded(daemon));
    // Pulls a killed run left listed are settled now: taken back with their ids, or dropped (never arrived).
    if (ledger.some((entry) => entry.pulling)) pool.#state.saveLedger();
    return pool;
  }

  /** The daemons, for the preflight. */
  get daemons(): Array<{
    endpoint: DockerEndpoint;
    docker: Docker;
    before: ReadonlySet<string>;
    held: number;
  }> {
    return this.#state.daemons.map((daemon) => ({ ...daemon, held: daemon.budget.used }));
  }

  /** The image an instance pulls (normalized), if any. */
  imageOf(instance: Instance): string | undefined {
    return this.#demand.imageOf(instance);
  }

  /** The bytes the registry reports for the image (asked once). */
  registrySize(image: string): Promise<number | undefined> {
    return this.#estimates.registrySize(image);
  }

  status(): ImagesStatus {
    let pulling = 0;
    let ready = 0;
    let held = 0;
    for (const daemon of this.#state.daemons) {
      pulling += daemon.pulls.size;
      ready += [...daemon.ahead].filter((image) => !daemon.pulls.has(image)).length;
      held += daemon.budget.used;
    }
    return {
      pulling,
      ready,
      pulledAhead: this.record.pulled_ahead.length,
      waited: this.record.waited.length,
      waitedSeconds: Math.round(this.record.waited.reduce((sum, entry) => sum + entry.seconds, 0) * 10) / 10,
      held,
      budget: this.#state.options.budget,
    };
  }

  /**
   * Called as an instance starts on a daemon (`host` with a host pool): returns once its image is there
   * (pulled ahead, or pulled now, the wait recorded). A pull that fails is left for the instance to report;
   * one that runs out of disk pauses pulling ahead, removes what the budget allows, and tries again.
   */
  async ready(instance: Instance, host?: PoolHost): Promise<void> {
    const daemon = this.#demand.daemonOf(host);
    const image = this.imageOf(instance);
    if (!daemon || !image) return;
    await this.#acquire(daemon, instance.instance_id, image, true);
  }

  /**
   * An image a grading needs outside its instance (graded again on another host, or an earlier submission
   * graded at the end of a resumed batch) on the daemon at `hostAddress` (the pool's host of that address;
   * without a host pool, the batch's daemon): pulled through the pool (the budget, the ledger, run.json) and
   * kept until the returned function is called.
   */
  async hold(image: string, hostAddress?: string): Promise<() => void> {
    const daemons = this.#state.daemons;
    const daemon = hostAddress
      ? daemons.find((candidate) => candidate.host?.docker.config.host === hostAddress)
      : daemons[0];
    if (!daemon || this.#state.closed) return () => {};
    const key = `grading ${++this.#holds}`;
    await this.#acquire(daemon, key, normalizeImage(image), false);
    return () => this.#release(daemon, key);
  }

  /** Marks `image` used on `daemon` by `key` (an instance, a grading) and gets it there; `agent`: a wait is recorded. */
  async #acquire(daemon: Daemon, key: string, image: string, agent: boolean): Promise<void> {
    const state = this.#state;
    daemon.running.set(key, image);
    daemon.ahead.delete(image);
    daemon.budget.touch(image);
    const started = Date.now();
    let waited = false;
    try {
      for (let attempt = 0; ; attempt++) {
        const pending = daemon.pulls.get(image);
        if (pending) {
          waited = true;
          await pending;
          continue;
        }
        if (daemon.budget.holds(image) || daemon.before.has(image)) break;
        if (await inspectImage(daemon.docker, image).catch(() => undefined)) {
          // There, but not pulled by this batch (someone else pulled it): not the batch's to remove.
          if (!daemon.budget.holds(image) && !daemon.pulls.has(image)) daemon.before.add(image);
          break;
        }
        waited = true;
        const estimate = await this.#estimates.estimate(image);
        await this.#eviction.makeRoom(daemon, estimate, image);
        // Pulled (or being pulled) meanwhile, ahead of this instance: that pull is its.
        if (daemon.pulls.has(image) || daemon.budget.holds(image)) continue;
        const error = await this.#pulls.pull(daemon, image, false, estimate);
        if (!error) break;
        if (!isNoSpace(error) || attempt >= 5) break;
        daemon.paused = true;
        state.say(
          `${state.where(daemon)}no space left on device while pulling ${image}: pulling ahead paused; removing images this batch pulled, then pulling it again`,
        );
        // Nothing to remove: an instance ending, or the daemon clearing the failed pull, makes room (up to 5 tries).
        if ((await this.#eviction.free(daemon, Number.POSITIVE_INFINITY, true)) === 0)
          await state.nextChange();
      }
    } finally {
      if (waited && agent) {
        const seconds = Math.round((Date.now() - started) / 100) / 10;
        this.record.waited.push({ image, ...state.hostField(daemon), seconds });
      }
      this.#ahead.fill();
      state.changed();
    }
  }

  /** The instance ended (or went back to the queue): its image may go once no one needs it. */
  ended(instance: Instance, host?: PoolHost): void {
    const daemon = this.#demand.daemonOf(host);
    if (daemon) this.#release(daemon, instance.instance_id);
  }

  #release(daemon: Daemon, key: string): void {
    const image = daemon.running.get(key);
    daemon.running.delete(key);
    if (image) daemon.budget.touch(image);
    daemon.paused = false;
    void this.#eviction.trim(daemon).then(() => {
      this.#ahead.fill();
      this.#state.wake();
    });
  }

  /** Starts pulling ahead (call once the queue is known). */
  start(): void {
    this.#ahead.fill();
  }

  /**
   * Stops pulling ahead, removes what the budget still asks to, and frees the connections (pulls still
   * under way end with them: the daemon cancels a pull whose client went away).
   */
  async close(): Promise<void> {
    const state = this.#state;
    state.closed = true;
    await this.#ahead.filling;
    await Promise.allSettled(state.daemons.map((daemon) => this.#eviction.trimAfterGradings(daemon)));
    for (const daemon of state.daemons) {
      daemon.unwatch();
      closeDockerClient(daemon.docker);
    }
    state.wake();
  }

  /** A container on the daemon was removed (a grading ended): the image it used may go now. */
  #containerEnded(daemon: Daemon): void {
    void this.#eviction.trim(daemon).then(() => {
      this.#ahead.fill();
      this.#state.wake();
    });
  }
}

/** What the pool reads from and tells the batch. */
export interface ImagePoolContext {
  runId: string;
  folder: string;
  /** The instances still queued, first to run first. */
  queue: () => readonly Instance[];
  /** The instances workers took from the queue and that have not ended, with their host once they have one. */
  taken: () => ReadonlyMap<Instance, PoolHost | undefined>;
  /** run.json's `images` of an earlier run of the folder (a resumed batch continues it). */
  previous?: Partial<ImagesRecord>;
  say: (line: string) => void;
  /** Whenever what `status()` shows changes. */
  onChange: () => void;
}
