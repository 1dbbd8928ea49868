import type Docker from "dockerode";
import type { Instance } from "../datasets/dataset.js";
import { closeDockerClient, createDockerClient, type DockerEndpoint } from "../environments/docker/client.js";
import { imageTags, inspectImage, normalizeImage, removeImage } from "../environments/docker/images.js";
import { ensureImage, isNoSpace } from "../environments/docker/pull.js";
import { registryImageSize } from "../environments/docker/registry-size.js";
import type { ImagesRecord } from "../formats/run-json.js";
import { formatBytes } from "../util/bytes.js";
import { chaosPoint } from "../util/chaos.js";
import { ImageBudget } from "./budget.js";
import type { PoolHost } from "./host-pool.js";
import { type LedgerImage, readLedger, writeLedger } from "./ledger.js";
import { imageUsers, watchContainerEnds } from "./users.js";

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

interface Daemon extends PoolDaemon {
  docker: Docker;
  budget: ImageBudget;
  /** Tags on the daemon before the batch (minus what this run pulled earlier): never removed. */
  before: Set<string>;
  /** Image ids of what the batch pulled (and holds). */
  ids: Map<string, string>;
  pulls: Map<string, Promise<void>>;
  /** Pulls under way the ledger lists (image → when it started, ISO), before they end. */
  pulling: Map<string, string>;
  /** Pulled (or being pulled) ahead; no instance has started with it yet. */
  ahead: Set<string>;
  aheadPulls: number;
  /** Running instances: id → image. */
  running: Map<string, string>;
  /** Pull-ahead stops after "no space left on device" until an instance ends. */
  paused: boolean;
  /** Workers waiting for room in the budget: pulling ahead leaves the room to them. */
  wanting: number;
  /** Stops listening to the daemon's container removals. */
  unwatch: () => void;
}

/**
 * The images of a batch on its daemons: pulls the images of the next queued instances while the workers run
 * agents (`pullWorkers` at a time per daemon, within the budget), so a worker finds its instance's image
 * there; removes, least recently used first, images this batch pulled that no queued or running instance
 * needs when keeping them would exceed the budget. Never removes what was on a daemon before the batch,
 * images containers use, or `keep` images. Pull errors are left to the instance's own pull to report.
 */
export class ImagePool {
  readonly record: ImagesRecord;
  readonly #daemons: Daemon[];
  readonly #options: ImagePoolOptions;
  readonly #keep: Set<string>;
  readonly #queue: () => readonly Instance[];
  readonly #taken: () => ReadonlyMap<Instance, PoolHost | undefined>;
  readonly #say: (line: string) => void;
  readonly #changed: () => void;
  readonly #runId: string;
  readonly #folder: string;
  readonly #sizes = new Map<string, Promise<number | undefined>>();
  #waiters: Array<() => void> = [];
  #closed = false;
  #filling: Promise<void> | undefined;
  /** Images whose pull ahead failed (not for lack of disk): their instances' own pulls report why. */
  readonly #aheadFailed = new Set<string>();
  #again = false;
  /** Holds of gradings so far (their keys). */
  #holds = 0;
  /** Bytes on disk per byte the registry reports, the most seen (estimates a pull before it happens). */
  #expansion = 1;
  #largestPulled = 0;
  /** Whether a pull has ended: before, an estimate is only the registry's compressed size (or nothing). */
  #learned = false;

  private constructor(
    daemons: Daemon[],
    options: ImagePoolOptions,
    context: ImagePoolContext,
    record: ImagesRecord,
  ) {
    this.#daemons = daemons;
    this.#options = options;
    this.#keep = new Set(options.keep.map(normalizeImage));
    this.#queue = context.queue;
    this.#taken = context.taken;
    this.#say = context.say;
    this.#changed = context.onChange;
    this.#runId = context.runId;
    this.#folder = context.folder;
    this.record = record;
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
    const opened = await Promise.all(
      daemons.map(async (spec): Promise<Daemon> => {
        const docker = createDockerClient(spec.endpoint);
        const daemon: Daemon = {
          ...spec,
          docker,
          budget: new ImageBudget(options.budget),
          before: new Set(),
          ids: new Map(),
          pulls: new Map(),
          pulling: new Map(),
          ahead: new Set(),
          aheadPulls: 0,
          running: new Map(),
          paused: false,
          wanting: 0,
          unwatch: () => {},
        };
        daemon.before = await imageTags(docker).catch(() => new Set<string>());
        for (const entry of ledger.filter((entry) => entry.host === spec.endpoint.host)) {
          const image = normalizeImage(entry.image);
          const found = await inspectImage(docker, image).catch(() => undefined);
          // A pull the earlier run started and was killed in: the image there now is the one it pulled.
          if (!found || (found.id !== entry.id && !entry.pulling)) continue;
          daemon.before.delete(image);
          daemon.ids.set(image, found.id);
          daemon.budget.adopt(image, found.bytes);
        }
        return daemon;
      }),
    );
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
    if (ledger.some((entry) => entry.pulling)) pool.#saveLedger();
    return pool;
  }

  /** The daemons, for the preflight. */
  get daemons(): Array<{
    endpoint: DockerEndpoint;
    docker: Docker;
    before: ReadonlySet<string>;
    held: number;
  }> {
    return this.#daemons.map((daemon) => ({ ...daemon, held: daemon.budget.used }));
  }

  /** The image an instance pulls (normalized), if any. */
  imageOf(instance: Instance): string | undefined {
    const image = this.#options.imageOf(instance);
    return image ? normalizeImage(image) : undefined;
  }

  /** The bytes the registry reports for the image (asked once). */
  registrySize(image: string): Promise<number | undefined> {
    let size = this.#sizes.get(image);
    if (!size) {
      size = registryImageSize(image);
      this.#sizes.set(image, size);
    }
    return size;
  }

  status(): ImagesStatus {
    let pulling = 0;
    let ready = 0;
    let held = 0;
    for (const daemon of this.#daemons) {
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
      budget: this.#options.budget,
    };
  }

  /**
   * Called as an instance starts on a daemon (`host` with a host pool): returns once its image is there
   * (pulled ahead, or pulled now, the wait recorded). A pull that fails is left for the instance to report;
   * one that runs out of disk pauses pulling ahead, removes what the budget allows, and tries again.
   */
  async ready(instance: Instance, host?: PoolHost): Promise<void> {
    const daemon = this.#daemonOf(host);
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
    const daemon = hostAddress
      ? this.#daemons.find((candidate) => candidate.host?.docker.config.host === hostAddress)
      : this.#daemons[0];
    if (!daemon || this.#closed) return () => {};
    const key = `grading ${++this.#holds}`;
    await this.#acquire(daemon, key, normalizeImage(image), false);
    return () => this.#release(daemon, key);
  }

  /** Marks `image` used on `daemon` by `key` (an instance, a grading) and gets it there; `agent`: a wait is recorded. */
  async #acquire(daemon: Daemon, key: string, image: string, agent: boolean): Promise<void> {
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
        const estimate = await this.#estimate(image);
        await this.#makeRoom(daemon, estimate, image);
        // Pulled (or being pulled) meanwhile, ahead of this instance: that pull is its.
        if (daemon.pulls.has(image) || daemon.budget.holds(image)) continue;
        const error = await this.#pull(daemon, image, false, estimate);
        if (!error) break;
        if (!isNoSpace(error) || attempt >= 5) break;
        daemon.paused = true;
        this.#say(
          `${this.#where(daemon)}no space left on device while pulling ${image}: pulling ahead paused; removing images this batch pulled, then pulling it again`,
        );
        // Nothing to remove: an instance ending, or the daemon clearing the failed pull, makes room (up to 5 tries).
        if ((await this.#free(daemon, Number.POSITIVE_INFINITY, true)) === 0) await this.#nextChange();
      }
    } finally {
      if (waited && agent) {
        const seconds = Math.round((Date.now() - started) / 100) / 10;
        this.record.waited.push({ image, ...this.#hostField(daemon), seconds });
      }
      this.#fill();
      this.#changed();
    }
  }

  /**
   * Before a worker's own pull: removes unneeded images, else waits for running instances to end or pulls to
   * settle, else removes images pulled ahead for queued instances (they are pulled again later), until `bytes`
   * fit. With nothing left to wait for or remove, the pull goes ahead over the budget (said).
   */
  async #makeRoom(daemon: Daemon, bytes: number, image: string): Promise<void> {
    daemon.wanting++;
    try {
      await this.#roomFor(daemon, bytes, image);
    } finally {
      daemon.wanting--;
    }
  }

  async #roomFor(daemon: Daemon, bytes: number, image: string): Promise<void> {
    const arrived = () => daemon.pulls.has(image) || daemon.budget.holds(image);
    while (!daemon.budget.fits(bytes) && !this.#closed && !arrived()) {
      if ((await this.#free(daemon, bytes, false)) > 0) continue;
      // Instances running (not waiting for room like this one) or pulls under way will free or settle room.
      if (daemon.pulls.size > 0 || daemon.running.size > daemon.wanting) {
        await this.#nextChange();
        continue;
      }
      // Images the run's other containers (its gradings) use are removed once those end.
      if ((await this.#usedByRun(daemon)).length > 0) {
        await this.#nextChange();
        continue;
      }
      if ((await this.#free(daemon, bytes, true)) > 0) continue;
      this.#say(
        `${this.#where(daemon)}the image budget (${formatBytes(daemon.budget.limit ?? 0)}) holds no more room and nothing else runs: pulling over it`,
      );
      return;
    }
  }

  /** The instance ended (or went back to the queue): its image may go once no one needs it. */
  ended(instance: Instance, host?: PoolHost): void {
    const daemon = this.#daemonOf(host);
    if (daemon) this.#release(daemon, instance.instance_id);
  }

  #release(daemon: Daemon, key: string): void {
    const image = daemon.running.get(key);
    daemon.running.delete(key);
    if (image) daemon.budget.touch(image);
    daemon.paused = false;
    void this.#trim(daemon).then(() => {
      this.#fill();
      this.#wake();
    });
  }

  /** Starts pulling ahead (call once the queue is known). */
  start(): void {
    this.#fill();
  }

  /**
   * Stops pulling ahead, removes what the budget still asks to, and frees the connections (pulls still
   * under way end with them: the daemon cancels a pull whose client went away).
   */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#filling;
    await Promise.allSettled(this.#daemons.map((daemon) => this.#trimAfterGradings(daemon)));
    for (const daemon of this.#daemons) {
      daemon.unwatch();
      closeDockerClient(daemon.docker);
    }
    this.#wake();
  }

  /**
   * Trims to the budget; while images this batch pulled are still over it because the run's containers
   * (gradings that outlive their instance) use them, waits for those containers to go and trims again.
   */
  async #trimAfterGradings(daemon: Daemon): Promise<void> {
    for (;;) {
      await this.#trim(daemon);
      if (daemon.budget.fits(0) || (await this.#usedByRun(daemon)).length === 0) return;
      await this.#nextChange();
    }
  }

  /** A container on the daemon was removed (a grading ended): the image it used may go now. */
  #containerEnded(daemon: Daemon): void {
    void this.#trim(daemon).then(() => {
      this.#fill();
      this.#wake();
    });
  }

  /** Images this batch pulled that the run's containers use though no instance of it runs with them (gradings). */
  async #usedByRun(daemon: Daemon): Promise<string[]> {
    const users = await imageUsers(daemon.docker, this.#runId);
    const running = new Set(daemon.running.values());
    return [...daemon.ids]
      .filter(([image, id]) => users.run.has(id) && !running.has(image))
      .map(([image]) => image);
  }

  #daemonOf(host: PoolHost | undefined): Daemon | undefined {
    return host ? this.#daemons.find((daemon) => daemon.host === host) : this.#daemons[0];
  }

  #where(daemon: Daemon): string {
    return daemon.host ? `Docker host ${daemon.host.docker.name}: ` : "";
  }

  #hostField(daemon: Daemon): { host?: string } {
    return daemon.host ? { host: daemon.host.docker.name } : {};
  }

  /** The size a pull of `image` should be expected to take. */
  async #estimate(image: string): Promise<number> {
    const size = await this.registrySize(image);
    return size === undefined ? this.#largestPulled : Math.ceil(size * this.#expansion);
  }

  /** Needed by a queued instance (on any daemon) or one running on `daemon` or taken for it. */
  #needed(daemon: Daemon): Set<string> {
    const needed = this.#inUse(daemon);
    for (const instance of this.#queue()) {
      const image = this.imageOf(instance);
      if (image) needed.add(image);
    }
    return needed;
  }

  /**
   * Images of instances running on `daemon`, or that a worker took from the queue for it (or for a host not
   * chosen yet) and is about to start: never removed, even to make room.
   */
  #inUse(daemon: Daemon): Set<string> {
    const used = new Set(daemon.running.values());
    for (const [instance, host] of this.#taken()) {
      const image = this.imageOf(instance);
      if (image && (!host || this.#daemonOf(host) === daemon)) used.add(image);
    }
    return used;
  }

  /**
   * Whether the batch may remove `image` from `daemon` (`pressed`: also what queued instances need, pulled
   * again later): never one a container uses (`used`: image ids), such as a grading's after its instance ended.
   */
  #removable(daemon: Daemon, pressed: boolean, used: ReadonlySet<string>): (image: string) => boolean {
    const needed = pressed ? this.#inUse(daemon) : this.#needed(daemon);
    return (image) =>
      !needed.has(image) &&
      !this.#keep.has(image) &&
      !daemon.before.has(image) &&
      !daemon.pulls.has(image) &&
      !used.has(daemon.ids.get(image) ?? "");
  }

  /** Pulls `image` on `daemon`, `estimate` bytes reserved meanwhile; resolves with the error when it failed. */
  async #pull(daemon: Daemon, image: string, ahead: boolean, estimate: number): Promise<unknown> {
    const under = daemon.pulls.get(image);
    if (under) return under;
    if (daemon.budget.holds(image)) return undefined;
    let failure: unknown;
    daemon.budget.reserve(image, estimate);
    if (ahead) daemon.ahead.add(image);
    // Listed before it starts: a kill during the pull leaves the image the run's, not taken for one there before.
    daemon.pulling.set(image, new Date().toISOString());
    this.#saveLedger();
    const pull = (async () => {
      this.#changed();
      try {
        const pulled = await ensureImage(daemon.docker, image, {
          timeoutSeconds: this.#options.pullTimeout,
          ...(this.#options.platform ? { platform: this.#options.platform } : {}),
        });
        chaosPoint("image-pulled");
        const found = await inspectImage(daemon.docker, image);
        if (!found) throw new Error(`${image} is missing after its pull`);
        daemon.host?.images.set(image, true);
        if (!pulled) {
          // Someone else pulled it meanwhile: not the batch's to remove.
          daemon.budget.settle(image, undefined);
          daemon.before.add(image);
          daemon.pulling.delete(image);
          this.#saveLedger();
          return;
        }
        daemon.pulling.delete(image);
        daemon.budget.settle(image, found.bytes);
        daemon.ids.set(image, found.id);
        this.#learn(image, found.bytes);
        this.record.pulled.push({ image, ...this.#hostField(daemon), bytes: found.bytes });
        if (ahead) this.record.pulled_ahead.push({ image, ...this.#hostField(daemon) });
        this.#saveLedger();
      } catch (error) {
        daemon.budget.settle(image, undefined);
        daemon.ahead.delete(image);
        failure = error;
        daemon.pulling.delete(image);
        this.#saveLedger();
      } finally {
        this.record.peak_bytes = Math.max(this.record.peak_bytes, daemon.budget.peak);
        daemon.pulls.delete(image);
      }
    })();
    daemon.pulls.set(image, pull);
    await pull;
    await this.#trim(daemon);
    this.#wake();
    return failure;
  }

  /** Learns how much larger than the registry's figure images are on disk. */
  #learn(image: string, bytes: number): void {
    this.#largestPulled = Math.max(this.#largestPulled, bytes);
    void this.registrySize(image).then((size) => {
      if (size) this.#expansion = Math.max(this.#expansion, bytes / size);
      this.#learned = true;
      this.#fill();
    });
  }

  /** Removes, least recently used first, what it takes for `bytes` more to fit; returns the bytes freed (0: none). */
  async #free(daemon: Daemon, bytes: number, pressed: boolean): Promise<number> {
    const removable = this.#removable(daemon, pressed, (await imageUsers(daemon.docker, this.#runId)).all);
    const victims =
      bytes === Number.POSITIVE_INFINITY
        ? daemon.budget.removable(removable)
        : (daemon.budget.victims(bytes, removable) ?? daemon.budget.removable(removable));
    const before = daemon.budget.used;
    for (const image of victims) await this.#remove(daemon, image);
    return before - daemon.budget.used;
  }

  /** After an instance or a pull ends: removes what keeping would put over the budget. */
  async #trim(daemon: Daemon): Promise<void> {
    if (daemon.budget.fits(0)) return;
    await this.#free(daemon, 0, false);
  }

  async #remove(daemon: Daemon, image: string): Promise<void> {
    const outcome = await removeImage(daemon.docker, image, daemon.ids.get(image)).catch((error: unknown) => {
      this.#say(`${this.#where(daemon)}${error instanceof Error ? error.message : String(error)}`);
      return "in use" as const;
    });
    if (outcome === "in use") return;
    daemon.budget.forget(image);
    daemon.ids.delete(image);
    daemon.ahead.delete(image);
    daemon.host?.images.set(image, false);
    if (outcome === "removed") this.record.removed.push({ image, ...this.#hostField(daemon) });
    this.#saveLedger();
    this.#changed();
  }

  /** Pulls ahead (see #fillOnce); calls while it runs make it run again. */
  #fill(): void {
    if (this.#closed) return;
    if (this.#filling) {
      this.#again = true;
      return;
    }
    this.#filling = (async () => {
      do {
        this.#again = false;
        await this.#fillOnce();
      } while (this.#again && !this.#closed);
    })()
      .catch((error: unknown) =>
        this.#say(`pulling ahead: ${error instanceof Error ? error.message : String(error)}`),
      )
      .finally(() => {
        this.#filling = undefined;
      });
  }

  /**
   * Starts pulls of the images of the next queued instances (in queue order, up to two per worker) not on
   * any daemon yet, each on the daemon with the fewest images waiting for an instance, while it has a free
   * pull slot, fewer than two images per worker waiting, no worker waiting for room, and room in its budget
   * once unneeded images are removed. Stops at the first image that does not fit: later ones would take the
   * room it needs; and while an instance a worker took has no image yet on its daemon (the worker pulls it,
   * room for it first). With a budget it starts after the first pull has ended.
   */
  async #fillOnce(): Promise<void> {
    // Estimates hold only once a pull has shown how much larger than the registry's figure images are on disk.
    if (this.#options.budget !== undefined && !this.#learned) return;
    if (this.#takenWithoutImage()) return;
    const workers = this.#daemons.reduce((sum, daemon) => sum + daemon.workers, 0);
    for (const instance of this.#queue().slice(0, 2 * workers)) {
      const image = this.imageOf(instance);
      if (this.#closed || !image || this.#aheadFailed.has(image) || this.#claimed(image)) continue;
      const daemon = this.#daemons
        .filter(
          (candidate) =>
            !candidate.paused &&
            candidate.wanting === 0 &&
            (!candidate.host || candidate.host.up) &&
            candidate.aheadPulls < this.#options.pullWorkers &&
            candidate.ahead.size < 2 * candidate.workers,
        )
        .sort((a, b) => a.ahead.size / a.workers - b.ahead.size / b.workers)[0];
      if (!daemon) return;
      const estimate = await this.#estimate(image);
      if (!(await this.#roomAhead(daemon, estimate))) return;
      // What changed while this waited: a worker took the instance, wants room, or the image came.
      if (this.#closed || daemon.wanting > 0 || this.#takenWithoutImage()) return;
      if (!this.#queue().includes(instance) || this.#claimed(image)) continue;
      void this.#ahead(daemon, image, estimate);
    }
  }

  /** On some daemon, pulled by the batch, being pulled, or there before it. */
  #claimed(image: string): boolean {
    return this.#daemons.some(
      (daemon) => daemon.pulls.has(image) || daemon.ids.has(image) || daemon.before.has(image),
    );
  }

  /** Whether a worker took an instance for a daemon (its host known) that has neither its image nor its pull. */
  #takenWithoutImage(): boolean {
    for (const [instance, host] of this.#taken()) {
      const image = this.imageOf(instance);
      const daemon = host || !this.#daemons[0]?.host ? this.#daemonOf(host) : undefined;
      if (!image || !daemon) continue;
      if (!daemon.pulls.has(image) && !daemon.ids.has(image) && !daemon.before.has(image)) return true;
    }
    return false;
  }

  /** Makes `bytes` fit on `daemon` by removing what no instance needs; false when it cannot. */
  async #roomAhead(daemon: Daemon, bytes: number): Promise<boolean> {
    if (daemon.budget.fits(bytes)) return true;
    const used = (await imageUsers(daemon.docker, this.#runId)).all;
    const victims = daemon.budget.victims(bytes, this.#removable(daemon, false, used));
    if (!victims) return false;
    for (const victim of victims) await this.#remove(daemon, victim);
    return daemon.budget.fits(bytes);
  }

  async #ahead(daemon: Daemon, image: string, estimate: number): Promise<void> {
    daemon.aheadPulls++;
    try {
      const error = await this.#pull(daemon, image, true, estimate);
      if (error && !isNoSpace(error)) this.#aheadFailed.add(image);
      if (error && isNoSpace(error)) {
        daemon.paused = true;
        this.#say(
          `${this.#where(daemon)}no space left on device while pulling ${image} ahead: pulling ahead paused until an instance ends`,
        );
        await this.#free(daemon, Number.POSITIVE_INFINITY, false);
      }
    } finally {
      daemon.aheadPulls--;
      this.#changed();
      this.#fill();
    }
  }

  #saveLedger(): void {
    const images: LedgerImage[] = [];
    for (const daemon of this.#daemons) {
      for (const [image, id] of daemon.ids) images.push({ image, host: daemon.endpoint.host, id });
      for (const [image, since] of daemon.pulling)
        if (!daemon.ids.has(image))
          images.push({ image, host: daemon.endpoint.host, id: "", pulling: since });
    }
    const earlier = readLedger(this.#runId)?.images ?? [];
    // What this process does not hold any more but an earlier one pulled (and did not remove) stays listed.
    const hosts = new Set(this.#daemons.map((daemon) => daemon.endpoint.host));
    const others = earlier.filter((entry) => !hosts.has(entry.host));
    writeLedger(this.#runId, this.#folder, [...others, ...images]);
  }

  #nextChange(): Promise<void> {
    return new Promise((resolve) => {
      this.#waiters.push(resolve);
      setTimeout(resolve, 5000).unref();
    });
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
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
