import { isNoSpace } from "../environments/docker/pull.js";
import type { ImageDemand } from "./demand.js";
import type { ImageEviction } from "./eviction.js";
import type { Daemon, PoolState } from "./pool-state.js";
import type { PullEstimates } from "./pull-estimates.js";
import type { ImagePulls } from "./pulls.js";

/** The parts of the pool pulling ahead works with. */
export interface PullAheadParts {
  demand: ImageDemand;
  estimates: PullEstimates;
  eviction: ImageEviction;
  pulls: ImagePulls;
}

/**
 * Pulling the images of the next queued instances while the workers run agents (`pullWorkers` at a time per
 * daemon, within the budget), so a worker finds its instance's image there. Pull errors are left to the
 * instance's own pull to report.
 */
export class PullAhead {
  readonly #state: PoolState;
  readonly #parts: PullAheadParts;
  /** Images whose pull ahead failed (not for lack of disk): their instances' own pulls report why. */
  readonly #failed = new Set<string>();
  #filling: Promise<void> | undefined;
  #again = false;

  constructor(state: PoolState, parts: PullAheadParts) {
    this.#state = state;
    this.#parts = parts;
  }

  /** The round of pulling ahead under way, if one is. */
  get filling(): Promise<void> | undefined {
    return this.#filling;
  }

  /** Pulls ahead (see #fillOnce); calls while it runs make it run again. */
  fill(): void {
    if (this.#state.closed) return;
    if (this.#filling) {
      this.#again = true;
      return;
    }
    this.#filling = (async () => {
      do {
        this.#again = false;
        await this.#fillOnce();
      } while (this.#again && !this.#state.closed);
    })()
      .catch((error: unknown) =>
        this.#state.say(`pulling ahead: ${error instanceof Error ? error.message : String(error)}`),
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
    const state = this.#state;
    const { demand, estimates, eviction } = this.#parts;
    // Estimates hold only once a pull has shown how much larger than the registry's figure images are on disk.
    if (state.options.budget !== undefined && !estimates.learned) return;
    if (demand.takenWithoutImage()) return;
    const workers = state.daemons.reduce((sum, daemon) => sum + daemon.workers, 0);
    for (const instance of demand.queue().slice(0, 2 * workers)) {
      const image = demand.imageOf(instance);
      if (state.closed || !image || this.#failed.has(image) || demand.claimed(image)) continue;
      const daemon = state.daemons
        .filter(
          (candidate) =>
            !candidate.paused &&
            candidate.wanting === 0 &&
            (!candidate.host || candidate.host.up) &&
            candidate.aheadPulls < state.options.pullWorkers &&
            candidate.ahead.size < 2 * candidate.workers,
        )
        .sort((a, b) => a.ahead.size / a.workers - b.ahead.size / b.workers)[0];
      if (!daemon) return;
      const estimate = await estimates.estimate(image);
      if (!(await eviction.roomAhead(daemon, estimate))) return;
      // What changed while this waited: a worker took the instance, wants room, or the image came.
      if (state.closed || daemon.wanting > 0 || demand.takenWithoutImage()) return;
      if (!demand.queue().includes(instance) || demand.claimed(image)) continue;
      void this.#ahead(daemon, image, estimate);
    }
  }

  async #ahead(daemon: Daemon, image: string, estimate: number): Promise<void> {
    const state = this.#state;
    daemon.aheadPulls++;
    try {
      const error = await this.#parts.pulls.pull(daemon, image, true, estimate);
      if (error && !isNoSpace(error)) this.#failed.add(image);
      if (error && isNoSpace(error)) {
        daemon.paused = true;
        state.say(
          `${state.where(daemon)}no space left on device while pulling ${image} ahead: pulling ahead paused until an instance ends`,
        );
        await this.#parts.eviction.free(daemon, Number.POSITIVE_INFINITY, false);
      }
    } finally {
      daemon.aheadPulls--;
      state.changed();
      this.fill();
    }
  }
}
