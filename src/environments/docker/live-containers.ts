/** A container this process created and has not removed yet. */
export interface LiveContainer {
  readonly name: string;
  /** Removes the container (or, while it is still being created, makes sure it will be). Must not throw. */
  remove(): Promise<void>;
}

/** The containers of this process, so a signal handler can remove them all before exiting. */
const live = new Set<LiveContainer>();

export function registerContainer(container: LiveContainer): void {
  live.add(container);
}

export function unregisterContainer(container: LiveContainer): void {
  live.delete(container);
}

/** Names of the containers still alive in this process. */
export function liveContainerNames(): string[] {
  return [...live].map((container) => container.name);
}

/**
 * Removes every container this process still holds (kept ones excepted: their environments decide).
 * For the CLI's SIGINT/SIGTERM handler and its last-resort error path; safe to call more than once.
 */
export async function removeAllLiveContainers(): Promise<void> {
  await Promise.all([...live].map((container) => container.remove()));
}
