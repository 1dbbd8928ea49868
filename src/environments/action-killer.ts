/** Why an action ended early when the user interrupted it (Ctrl-C, or its run was aborted). */
export const INTERRUPTED = "Command interrupted by the user; all its processes were killed";

/**
 * Ends one action early when its timeout passes or its signal aborts: `kill` stops every process of the action
 * (by its marker, from a second exec), again while the action has not ended, and `giveUp` is called when three
 * tries a second apart did not end it (a process that cleared its environment, `env -i` or a service script,
 * still holds the output). Docker's execs and sessions and Kubernetes' pod execs and sessions share it.
 */
export class ActionKiller {
  /** Why the action was killed; empty while it was not. */
  reason = "";
  readonly #kill: () => Promise<void>;
  readonly #giveUp: () => void | Promise<void>;
  readonly #signal: AbortSignal | undefined;
  readonly #timer: NodeJS.Timeout;
  readonly #onAbort = () => this.kill(INTERRUPTED);
  #ended = false;
  #wake = () => {};
  #killing: Promise<void> | undefined;

  constructor(
    request: { timeoutSeconds: number; killAfterMs?: number | undefined; signal?: AbortSignal | undefined },
    kill: () => Promise<void>,
    giveUp: () => void | Promise<void>,
  ) {
    this.#kill = kill;
    this.#giveUp = giveUp;
    this.#signal = request.signal;
    this.#timer = setTimeout(
      () =>
        this.kill(`Command timed out after ${request.timeoutSeconds} seconds; all its processes were killed`),
      request.killAfterMs ?? request.timeoutSeconds * 1000,
    );
    this.#signal?.addEventListener("abort", this.#onAbort, { once: true });
    if (this.#signal?.aborted) this.#onAbort();
  }

  kill(reason: string): void {
    if (this.reason) return;
    this.reason = reason;
    this.#killing = (async () => {
      // A kill can race the start of the action; try again while it has not ended, then stop waiting.
      for (let attempt = 0; attempt < 3 && !this.#ended; attempt++) {
        await this.#kill().catch(() => {});
        if (!this.#ended) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 1_000);
            this.#wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
      }
      if (!this.#ended) await this.#giveUp();
    })();
  }

  /** The action has ended: no more kills; resolves when a kill in progress has finished. */
  async ended(): Promise<void> {
    this.#ended = true;
    this.#wake();
    clearTimeout(this.#timer);
    this.#signal?.removeEventListener("abort", this.#onAbort);
    await this.#killing;
  }
}
