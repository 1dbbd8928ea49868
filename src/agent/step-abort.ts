import { exitMessage, UserInterruption } from "../errors.js";

/**
 * Cuts the running step short from outside. `stop` ends the run with an exit status (SIGTERM, a second Ctrl-C,
 * a trajectory that cannot be written); `abort` only cuts the step (Ctrl-C when a person is asked next). Each
 * step gets a fresh signal for its model call and its commands.
 */
export class StepAbort {
  #controller = new AbortController();
  #stopStatus: string | undefined;

  /** A fresh signal, for the next step. */
  renew(): void {
    this.#controller = new AbortController();
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  abort(reason: Error): void {
    this.#controller.abort(reason);
  }

  stop(exitStatus: string): void {
    this.#stopStatus = exitStatus;
    this.abort(new Error("stopped by the user"));
  }

  /** The exit status `stop` was given; undefined while the run goes on. */
  get stopStatus(): string | undefined {
    return this.#stopStatus;
  }

  /** After `stop`: throws the UserInterruption whose exit message carries the status given. */
  throwIfStopped(): void {
    if (this.#stopStatus !== undefined) throw new UserInterruption(exitMessage(this.#stopStatus));
  }
}
