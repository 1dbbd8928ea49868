import type { V1Pod } from "@kubernetes/client-node";
import { UserError } from "../../errors.js";
import { clusterError, type KubeClient } from "./client.js";
import { PodLostError, PodStartError } from "./errors.js";
import { type PodPhase, startupState } from "./pod-state.js";
import type { RunPodWatch } from "./pod-watch.js";

export interface PodStartOptions {
  /** Seconds the pod may take to run (scheduling, pull, start). */
  timeoutSeconds: number;
  /** Told each change of where the pod is (pending, pulling, running). */
  onPhase?: (phase: PodPhase, reason: string) => void;
  /** Aborting stops the wait (the caller deletes the pod). */
  signal?: AbortSignal;
  /**
   * Asked, once the pod is placed and until it runs, whether its container answers already (true: the wait
   * is over). The kubelet reports a started container on its next relist (up to a second later); a probe
   * that reaches the container through the API server need not wait for that.
   */
  probe?: () => Promise<boolean>;
}

/** How often the probe asks while the pod starts. */
const PROBE_MS = 50;

/** How a start ended: the pod (running, or answering the probe), or why not. */
type Outcome = { pod: V1Pod; error?: undefined } | { pod?: undefined; error: Error };

/** One pod's way to running, told the pod's changes by the run's watch. */
class PodStart {
  readonly outcome: Promise<Outcome>;
  settled = false;
  last: { phase: PodPhase; reason: string } = { phase: "pending", reason: "being created" };
  readonly #name: string;
  readonly #image: string;
  readonly #options: PodStartOptions;
  #resolve: (outcome: Outcome) => void = () => {};
  #latest: V1Pod | undefined;
  #probing = false;

  constructor(manifest: V1Pod, options: PodStartOptions) {
    this.#name = manifest.metadata?.name ?? "";
    this.#image = manifest.spec?.containers[0]?.image ?? "";
    this.#options = options;
    this.outcome = new Promise((resolve) => {
      this.#resolve = resolve;
    });
  }

  settle(outcome: Outcome): void {
    if (this.settled) return;
    this.settled = true;
    this.#resolve(outcome);
  }

  /** The pod changed (undefined: it was deleted). */
  seen(pod: V1Pod | undefined): void {
    if (!pod) {
      this.settle({ error: new PodLostError(`Pod ${this.#name} was deleted before it started`) });
      return;
    }
    const state = startupState(pod);
    if (state.state === "failed") {
      this.settle({
        error: new PodStartError(`Pod ${this.#name} (image ${this.#image}) cannot run: ${state.reason}`),
      });
      return;
    }
    if (state.state !== this.last.phase || state.reason !== this.last.reason) {
      this.last = { phase: state.state, reason: state.reason };
      this.#options.onPhase?.(state.state, state.reason);
    }
    this.#latest = pod;
    if (state.state === "running") this.settle({ pod });
    else if (state.state === "pulling" && pod.spec?.nodeName) this.#probe();
  }

  /** Once placed: asks the probe every PROBE_MS until it answers or the start is over. */
  #probe(): void {
    const probe = this.#options.probe;
    if (!probe || this.#probing) return;
    this.#probing = true;
    void (async () => {
      while (!this.settled) {
        if (await probe().catch(() => false)) {
          if (this.#latest) this.settle({ pod: this.#latest });
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, PROBE_MS));
      }
    })();
  }

  /** Why the start is over at the deadline. */
  timedOut(): Error {
    const where = this.last.phase === "pending" ? "was not scheduled" : "did not start";
    return new PodStartError(
      `Pod ${this.#name} (image ${this.#image}) ${where} within pull_timeout (${this.#options.timeoutSeconds} s): ${this.last.reason}`,
    );
  }
}

/**
 * Creates `manifest` and waits, through the run's watch, until its container runs and the pod is ready (or
 * `probe` answers). Rejects with a PodStartError saying why when the pod fails, cannot start at all (an
 * invalid image name, an image missing under pull policy Never), or is not running after `timeoutSeconds`
 * (still unschedulable, its image still not pulled: the last reason is in the message); with a PodLostError
 * when it is deleted meanwhile. The caller deletes the pod on failure.
 */
export async function createAndStartPod(
  client: KubeClient,
  watch: RunPodWatch,
  manifest: V1Pod,
  options: PodStartOptions,
): Promise<V1Pod> {
  const name = manifest.metadata?.name ?? "";
  const start = new PodStart(manifest, options);
  const unsubscribe = watch.subscribe(name, (pod) => start.seen(pod));
  const timer = setTimeout(() => start.settle({ error: start.timedOut() }), options.timeoutSeconds * 1000);
  const onAbort = () => start.settle({ error: new UserError(`Interrupted while starting pod ${name}`) });
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    options.onPhase?.("pending", start.last.reason);
    try {
      const created = await client.core.createNamespacedPod({ namespace: client.namespace, body: manifest });
      // What the watch has seen by now, else what the create returned, is where the pod starts from.
      start.seen(watch.get(name, client.namespace) ?? created);
    } catch (error) {
      start.settle({ error: clusterError(client, `creating pod ${name}`, error) });
    }
    const { pod, error } = await start.outcome;
    if (error) throw error;
    return pod;
  } finally {
    start.settled = true;
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    unsubscribe();
  }
}
