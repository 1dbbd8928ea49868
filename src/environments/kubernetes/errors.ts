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

/** The pod's lifetime is over (container_timeout: its deadline passed or its `sleep` ended): the run ends. */
export class PodEndedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PodEndedError";
  }
}
