import { inspectImage } from "../environments/docker/images.js";
import { ensureImage } from "../environments/docker/pull.js";
import { chaosPoint } from "../util/chaos.js";
import type { ImageEviction } from "./eviction.js";
import type { Daemon, PoolState } from "./pool-state.js";
import type { PullEstimates } from "./pull-estimates.js";

/**
 * The pulls of a batch's images: one at a time per image and daemon, its estimated size reserved in the
 * budget meanwhile, listed in the ledger before it starts, recorded in run.json once it ends.
 */
export class ImagePulls {
  readonly #state: PoolState;
  readonly #estimates: PullEstimates;
  readonly #eviction: ImageEviction;

  constructor(state: PoolState, estimates: PullEstimates, eviction: ImageEviction) {
    this.#state = state;
    this.#estimates = estimates;
    this.#eviction = eviction;
  }

  /** Pulls `image` on `daemon`, `estimate` bytes reserved meanwhile; resolves with the error when it failed. */
  async pull(daemon: Daemon, image: string, ahead: boolean, estimate: number): Promise<unknown> {
    const state = this.#state;
    const under = daemon.pulls.get(image);
    if (under) return under;
    if (daemon.budget.holds(image)) return undefined;
    let failure: unknown;
    daemon.budget.reserve(image, estimate);
    if (ahead) daemon.ahead.add(image);
    // Listed before it starts: a kill during the pull leaves the image the run's, not taken for one there before.
    daemon.pulling.set(image, new Date().toISOString());
    state.saveLedger();
    const pull = (async () => {
      state.changed();
      try {
        await this.#pulled(daemon, image, ahead);
      } catch (error) {
        daemon.budget.settle(image, undefined);
        daemon.ahead.delete(image);
        failure = error;
        daemon.pulling.delete(image);
        state.saveLedger();
      } finally {
        state.record.peak_bytes = Math.max(state.record.peak_bytes, daemon.budget.peak);
        daemon.pulls.delete(image);
      }
    })();
    daemon.pulls.set(image, pull);
    await pull;
    await this.#eviction.trim(daemon);
    state.wake();
    return failure;
  }

  /** The pull itself, and what it leaves: the image's bytes and id held, run.json's record, the ledger. */
  async #pulled(daemon: Daemon, image: string, ahead: boolean): Promise<void> {
    const state = this.#state;
    const pulled = await ensureImage(daemon.docker, image, {
      timeoutSeconds: state.options.pullTimeout,
      ...(state.options.platform ? { platform: state.options.platform } : {}),
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
      state.saveLedger();
      return;
    }
    daemon.pulling.delete(image);
    daemon.budget.settle(image, found.bytes);
    daemon.ids.set(image, found.id);
    this.#estimates.learn(image, found.bytes);
    state.record.pulled.push({ image, ...state.hostField(daemon), bytes: found.bytes });
    if (ahead) state.record.pulled_ahead.push({ image, ...state.hostField(daemon) });
    state.saveLedger();
  }
}
