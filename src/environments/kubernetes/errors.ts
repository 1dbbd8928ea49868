import { UserError } from "../../errors.js";

/**
 * The pod of a run is lost (deleted, evicted, preempted, its node gone): an infrastructure failure, not the
 * run's result. A batch runs the instance again (once).
 */
export class PodLostError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PodLostError";
  }
}

/** A pod that did not start: never scheduled, its image not pulled, its container not created, in time or at all. */
export class PodStartError extends UserError {
  constructor(message: string) {
    super(message);
    this.name = "PodStartError";
  }
}
