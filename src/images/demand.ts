import type { Instance } from "../datasets/dataset.js";
import { normalizeImage } from "../environments/docker/images.js";
import type { PoolHost } from "./host-pool.js";
import type { ImagePoolContext } from "./pool.js";
import type { Daemon, PoolState } from "./pool-state.js";

/** Which images the batch needs, and where: those of its queued instances, and those workers took or run. */
export class ImageDemand {
  readonly #state: PoolState;
  /** The instances still queued, first to run first. */
  readonly queue: () => readonly Instance[];
  readonly #taken: () => ReadonlyMap<Instance, PoolHost | undefined>;

  constructor(state: PoolState, context: ImagePoolContext) {
    this.#state = state;
    this.queue = context.queue;
    this.#taken = context.taken;
  }

  /** The image an instance pulls (normalized), if any. */
  imageOf(instance: Instance): string | undefined {
    const image = this.#state.options.imageOf(instance);
    return image ? normalizeImage(image) : undefined;
  }

  /** The daemon of a host of the pool; without a host pool, the batch's daemon. */
  daemonOf(host: PoolHost | undefined): Daemon | undefined {
    return host ? this.#state.daemons.find((daemon) => daemon.host === host) : this.#state.daemons[0];
  }

  /** Needed by a queued instance (on any daemon) or one running on `daemon` or taken for it. */
  needed(daemon: Daemon): Set<string> {
    const needed = this.inUse(daemon);
    for (const instance of this.queue()) {
      const image = this.imageOf(instance);
      if (image) needed.add(image);
    }
    return needed;
  }

  /**
   * Images of instances running on `daemon`, or that a worker took from the queue for it (or for a host not
   * chosen yet) and is about to start: never removed, even to make room.
   */
  inUse(daemon: Daemon): Set<string> {
    const used = new Set(daemon.running.values());
    for (const [instance, host] of this.#taken()) {
      const image = this.imageOf(instance);
      if (image && (!host || this.daemonOf(host) === daemon)) used.add(image);
    }
    return used;
  }

  /** On some daemon, pulled by the batch, being pulled, or there before it. */
  claimed(image: string): boolean {
    return this.#state.daemons.some(
      (daemon) => daemon.pulls.has(image) || daemon.ids.has(image) || daemon.before.has(image),
    );
  }

  /** Whether a worker took an instance for a daemon (its host known) that has neither its image nor its pull. */
  takenWithoutImage(): boolean {
    for (const [instance, host] of this.#taken()) {
      const image = this.imageOf(instance);
      const daemon = host || !this.#state.daemons[0]?.host ? this.daemonOf(host) : undefined;
      if (!image || !daemon) continue;
      if (!daemon.pulls.has(image) && !daemon.ids.has(image) && !daemon.before.has(image)) return true;
    }
    return false;
  }
}
