import { makeInformer, type V1Pod } from "@kubernetes/client-node";
import type { KubeClient } from "./client.js";

/** Told the pod's every change; `undefined` once it is deleted. */
export type PodListener = (pod: V1Pod | undefined) => void;

/** How long a watch that failed waits before it lists and watches again. */
const RESTART_MS = 1000;

/**
 * The pods of one run in one namespace, kept current by one list-and-watch (an informer) that every
 * environment of the run shares: a batch of hundreds of pods holds one watch, not hundreds. A watch that
 * fails is started again; a relist tells listeners of pods deleted meanwhile. Released by the last user.
 */
export class RunPodWatch {
  static readonly #watches = new Map<string, RunPodWatch>();
  readonly #informer: ReturnType<typeof makeInformer<V1Pod>>;
  readonly #listeners = new Map<string, Set<PodListener>>();
  readonly #key: string;
  #users = 0;
  #stopped = false;
  #started: Promise<void>;

  private constructor(client: KubeClient, selector: string, key: string) {
    this.#key = key;
    const namespace = client.namespace;
    this.#informer = makeInformer<V1Pod>(
      client.config,
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods`,
      () => client.core.listNamespacedPod({ namespace, labelSelector: selector }),
      selector,
    );
    const tell = (pod: V1Pod, deleted: boolean) => {
      const name = pod.metadata?.name ?? "";
      for (const listener of this.#listeners.get(name) ?? []) listener(deleted ? undefined : pod);
    };
    this.#informer.on("add", (pod) => tell(pod, false));
    this.#informer.on("update", (pod) => tell(pod, false));
    this.#informer.on("delete", (pod) => tell(pod, true));
    this.#informer.on("error", () => {
      if (this.#stopped) return;
      const timer = setTimeout(() => {
        if (!this.#stopped) this.#started = this.#informer.start().catch(() => {});
      }, RESTART_MS);
      timer.unref();
    });
    this.#started = this.#informer.start().catch(() => {});
  }

  /** The shared watch of the pods labelled `selector` in the client's namespace; `release` it when done. */
  static acquire(client: KubeClient, selector: string): RunPodWatch {
    const key = `${client.server} ${client.source} ${client.namespace} ${selector}`;
    let watch = RunPodWatch.#watches.get(key);
    if (!watch) {
      watch = new RunPodWatch(client, selector, key);
      RunPodWatch.#watches.set(key, watch);
    }
    watch.#users++;
    return watch;
  }

  /** Resolves once the first list is in (or failed: the watch retries). */
  ready(): Promise<void> {
    return this.#started;
  }

  /** The pod as last seen, if the watch has it. */
  get(name: string, namespace: string): V1Pod | undefined {
    return this.#informer.get(name, namespace);
  }

  /** Calls `listener` on every change of pod `name`; returns the function that stops it. */
  subscribe(name: string, listener: PodListener): () => void {
    let set = this.#listeners.get(name);
    if (!set) {
      set = new Set();
      this.#listeners.set(name, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(name);
    };
  }

  /** One user is done; the last one stops the watch. */
  release(): void {
    this.#users--;
    if (this.#users > 0) return;
    this.#stopped = true;
    RunPodWatch.#watches.delete(this.#key);
    void this.#informer.stop();
  }
}
