import type { DockerHostConfig } from "../config/docker-hosts.js";
import type { GradeResult } from "../eval/grade-instance.js";
import type { GradingContainer } from "../eval/grading-container.js";

/** A grading begun as the agent submitted, before its environment was closed. */
export interface EarlyGrading {
  submission: string;
  result: Promise<GradeResult | undefined>;
}

/** Where one instance's grading stands (see the table above `BatchGrader`). */
export interface Slot {
  /** The host the instance runs (or ran) on, with a pool. */
  host?: DockerHostConfig;
  /** The grading container started while its agent works (used by its grading once). */
  container?: Promise<GradingContainer>;
  /** The grading begun when its agent submitted. */
  early?: EarlyGrading;
  /** Its agent has submitted or ended: no grading container is started for it any more. */
  ended?: boolean;
}

/** The slots of a batch's instances, by instance id. */
export class GradingSlots {
  readonly #slots = new Map<string, Slot>();

  /** The instance's slot (made on first use), noting the host it runs on. */
  of(instanceId: string, host?: DockerHostConfig): Slot {
    let slot = this.#slots.get(instanceId);
    if (!slot) {
      slot = {};
      this.#slots.set(instanceId, slot);
    }
    if (host) slot.host = host;
    return slot;
  }

  /** The host the instance runs (or ran) on, if known. */
  hostOf(instanceId: string): DockerHostConfig | undefined {
    return this.#slots.get(instanceId)?.host;
  }

  /** The slot's grading container, now the caller's (it is used once). */
  take(slot: Slot): Promise<GradingContainer> | undefined {
    const container = slot.container;
    slot.container = undefined;
    return container;
  }

  /** Takes the grading containers no grading took, and removes them; resolves when they are gone. */
  releaseUnused(): Array<Promise<void>> {
    const released: Array<Promise<void>> = [];
    for (const slot of this.#slots.values()) if (slot.container) released.push(release(this.take(slot)));
    return released;
  }
}

/** Removes a grading container no grading will use (once it has started, if it does). */
export async function release(container: Promise<GradingContainer> | undefined): Promise<void> {
  await container?.then(
    (grading) => grading.remove().catch(() => {}),
    () => {},
  );
}

/** Resolves when `work` ends, however it ends. */
export function settled(work: Promise<unknown>): Promise<void> {
  return work.then(
    () => {},
    () => {},
  );
}
