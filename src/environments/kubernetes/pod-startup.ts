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
}

/**
 * Creates `manifest` and waits, through the run's watch, until its container runs and the pod is ready.
 * Rejects with a PodStartError saying why when the pod fails, cannot start at all (an invalid image name,
 * an image missing under pull policy Never), or is not running after `timeoutSeconds` (still unschedulable,
 * its image still not pulled: the last reason is in the message). The caller deletes the pod on failure.
 */
export async function createAndStartPod(
  client: KubeClient,
  watch: RunPodWatch,
  manifest: V1Pod,
  options: PodStartOptions,
): Promise<V1Pod> {
  const name = manifest.metadata?.name ?? "";
  const image = manifest.spec?.containers[0]?.image ?? "";
  let settle: (outcome: { pod?: V1Pod; error?: Error }) => void = () => {};
  const outcome = new Promise<{ pod?: V1Pod; error?: Error }>((resolve) => {
    settle = resolve;
  });
  let last: { phase: PodPhase; reason: string } = { phase: "pending", reason: "being created" };
  const onPod = (pod: V1Pod | undefined) => {
    if (!pod) {
      settle({ error: new PodLostError(`Pod ${name} was deleted before it started`) });
      return;
    }
    const state = startupState(pod);
    if (state.state === "failed") {
      settle({ error: new PodStartError(`Pod ${name} (image ${image}) cannot run: ${state.reason}`) });
      return;
    }
    if (state.state !== last.phase || state.reason !== last.reason) {
      last = { phase: state.state, reason: state.reason };
      options.onPhase?.(state.state, state.reason);
    }
    if (state.state === "running") settle({ pod });
  };
  const unsubscribe = watch.subscribe(name, onPod);
  const timer = setTimeout(() => {
    const where = last.phase === "pending" ? "was not scheduled" : "did not start";
    settle({
      error: new PodStartError(
        `Pod ${name} (image ${image}) ${where} within pull_timeout (${options.timeoutSeconds} s): ${last.reason}`,
      ),
    });
  }, options.timeoutSeconds * 1000);
  const onAbort = () => settle({ error: new UserError(`Interrupted while starting pod ${name}`) });
  options.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    options.onPhase?.("pending", last.reason);
    try {
      const created = await client.core.createNamespacedPod({ namespace: client.namespace, body: manifest });
      // The watch may have missed nothing yet; what the create returned is where the pod starts from.
      const seen = watch.get(name, client.namespace) ?? created;
      onPod(seen);
    } catch (error) {
      settle({ error: clusterError(client, `creating pod ${name}`, error) });
    }
    const { pod, error } = await outcome;
    if (error) throw error;
    return pod as V1Pod;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    unsubscribe();
  }
}
