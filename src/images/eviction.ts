import { normalizeImage, removeImage } from "../environments/docker/images.js";
import { formatBytes } from "../util/bytes.js";
import type { ImageDemand } from "./demand.js";
import type { Daemon, PoolState } from "./pool-state.js";
import { imageUsers } from "./users.js";

/**
 * Removing what the batch pulled to stay within each daemon's budget, least recently used first: never what
 * was on a daemon before the batch, images containers use, `keep` images, or (unless pressed for room) what
 * queued instances need.
 */
export class ImageEviction {
  readonly #state: PoolState;
  readonly #demand: ImageDemand;
  readonly #keep: Set<string>;

  constructor(state: PoolState, demand: ImageDemand) {
    this.#state = state;
    this.#demand = demand;
    this.#keep = new Set(state.options.keep.map(normalizeImage));
  }

  /**
   * Whether the batch may remove `image` from `daemon` (`pressed`: also what queued instances need, pulled
   * again later): never one a container uses (`used`: image ids), such as a grading's after its instance ended.
   */
  #removable(daemon: Daemon, pressed: boolean, used: ReadonlySet<string>): (image: string) => boolean {
    const needed = pressed ? this.#demand.inUse(daemon) : this.#demand.needed(daemon);
    return (image) =>
      !needed.has(image) &&
      !this.#keep.has(image) &&
      !daemon.before.has(image) &&
      !daemon.pulls.has(image) &&
      !used.has(daemon.ids.get(image) ?? "");
  }

  /** Removes, least recently used first, what it takes for `bytes` more to fit; returns the bytes freed (0: none). */
  async free(daemon: Daemon, bytes: number, pressed: boolean): Promise<number> {
    const removable = this.#removable(
      daemon,
      pressed,
      (await imageUsers(daemon.docker, this.#state.runId)).all,
    );
    const victims =
      bytes === Number.POSITIVE_INFINITY
        ? daemon.budget.removable(removable)
        : (daemon.budget.victims(bytes, removable) ?? daemon.budget.removable(removable));
    const before = daemon.budget.used;
    for (const image of victims) await this.#remove(daemon, image);
    return before - daemon.budget.used;
  }

  /** After an instance or a pull ends: removes what keeping would put over the budget. */
  async trim(daemon: Daemon): Promise<void> {
    if (daemon.budget.fits(0)) return;
    await this.free(daemon, 0, false);
  }

  /** Makes `bytes` fit on `daemon` by removing what no instance needs; false when it cannot. */
  async roomAhead(daemon: Daemon, bytes: number): Promise<boolean> {
    if (daemon.budget.fits(bytes)) return true;
    const used = (await imageUsers(daemon.docker, this.#state.runId)).all;
    const victims = daemon.budget.victims(bytes, this.#removable(daemon, false, used));
    if (!victims) return false;
    for (const victim of victims) await this.#remove(daemon, victim);
    return daemon.budget.fits(bytes);
  }

  async #remove(daemon: Daemon, image: string): Promise<void> {
    const state = this.#state;
    const outcome = await removeImage(daemon.docker, image, daemon.ids.get(image)).catch((error: unknown) => {
      state.say(`${state.where(daemon)}${error instanceof Error ? error.message : String(error)}`);
      return "in use" as const;
    });
    if (outcome === "in use") return;
    daemon.budget.forget(image);
    daemon.ids.delete(image);
    daemon.ahead.delete(image);
    daemon.host?.images.set(image, false);
    if (outcome === "removed") state.record.removed.push({ image, ...state.hostField(daemon) });
    state.saveLedger();
    state.changed();
  }

  /**
   * Before a worker's own pull: removes unneeded images, else waits for running instances to end or pulls to
   * settle, else removes images pulled ahead for queued instances (they are pulled again later), until `bytes`
   * fit. With nothing left to wait for or remove, the pull goes ahead over the budget (said).
   */
  async makeRoom(daemon: Daemon, bytes: number, image: string): Promise<void> {
    daemon.wanting++;
    try {
      await this.#roomFor(daemon, bytes, image);
    } finally {
      daemon.wanting--;
    }
  }

  async #roomFor(daemon: Daemon, bytes: number, image: string): Promise<void> {
    const state = this.#state;
    const arrived = () => daemon.pulls.has(image) || daemon.budget.holds(image);
    while (!daemon.budget.fits(bytes) && !state.closed && !arrived()) {
      if ((await this.free(daemon, bytes, false)) > 0) continue;
      // Instances running (not waiting for room like this one) or pulls under way will free or settle room.
      if (daemon.pulls.size > 0 || daemon.running.size > daemon.wanting) {
        await state.nextChange();
        continue;
      }
      // Images the run's other containers (its gradings) use are removed once those end.
      if ((await this.#usedByRun(daemon)).length > 0) {
        await state.nextChange();
        continue;
      }
      if ((await this.free(daemon, bytes, true)) > 0) continue;
      state.say(
        `${state.where(daemon)}the image budget (${formatBytes(daemon.budget.limit ?? 0)}) holds no more room and nothing else runs: pulling over it`,
      );
      return;
    }
  }

  /**
   * Trims to the budget; while images this batch pulled are still over it because the run's containers
   * (gradings that outlive their instance) use them, waits for those containers to go and trims again.
   */
  async trimAfterGradings(daemon: Daemon): Promise<void> {
    for (;;) {
      await this.trim(daemon);
      if (daemon.budget.fits(0) || (await this.#usedByRun(daemon)).length === 0) return;
      await this.#state.nextChange();
    }
  }

  /** Images this batch pulled that the run's containers use though no instance of it runs with them (gradings). */
  async #usedByRun(daemon: Daemon): Promise<string[]> {
    const users = await imageUsers(daemon.docker, this.#state.runId);
    const running = new Set(daemon.running.values());
    return [...daemon.ids]
      .filter(([image, id]) => users.run.has(id) && !running.has(image))
      .map(([image]) => image);
  }
}
