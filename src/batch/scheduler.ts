import type { Instance } from "../datasets/dataset.js";
import { PodLostError } from "../environments/kubernetes/errors.js";
import type { HostPool, PoolHost } from "../images/host-pool.js";

/** An instance lost with its host more often than this is recorded as it ended (it may be what kills hosts). */
export const MAX_HOST_LOSSES = 3;

/** An instance whose pod was lost runs again this many times; then it is recorded as it ended. */
export const MAX_POD_LOSSES = 1;

/** An instance to run now, and the host slot it holds (with a host pool). */
export interface Job {
  instance: Instance;
  host?: PoolHost;
  image?: string;
}

/**
 * Hands the batch's workers their instances, each with a host slot when there is a host pool. An instance
 * lost with its host goes back to the front of the queue, so a worker asks for more until the queue is empty
 * and nothing runs that could come back.
 */
export class Scheduler {
  readonly pool: HostPool | undefined;
  readonly #queue: Instance[];
  readonly #imageOf: (instance: Instance) => string | undefined;
  readonly #losses = new Map<string, number>();
  /** Instances a worker took from the queue and that have not ended, with their host once acquired. */
  readonly #taken = new Map<Instance, PoolHost | undefined>();
  #running = 0;
  #waiters: Array<() => void> = [];

  constructor(
    queue: Instance[],
    pool?: HostPool,
    imageOf: (instance: Instance) => string | undefined = () => undefined,
  ) {
    this.#queue = [...queue];
    this.pool = pool;
    this.#imageOf = imageOf;
  }

  /** The instances still queued, the next to run first. */
  get queued(): readonly Instance[] {
    return this.#queue;
  }

  /**
   * The instances workers took from the queue that have not ended (running, or about to start), each with
   * its host once it has one: the image pool keeps their images and room for them.
   */
  get taken(): ReadonlyMap<Instance, PoolHost | undefined> {
    return this.#taken;
  }

  /** The next job; undefined once nothing is left to run, or the pool stopped (every host down). */
  async next(): Promise<Job | undefined> {
    for (;;) {
      if (this.pool?.stopped) return undefined;
      const instance = this.#queue.shift();
      if (instance) {
        this.#running++;
        this.#taken.set(instance, undefined);
        if (!this.pool) return { instance };
        const image = this.#imageOf(instance);
        const host = await this.pool.acquire(instance.instance_id, image);
        if (host) {
          this.#taken.set(instance, host);
          return { instance, host, ...(image ? { image } : {}) };
        }
        this.#taken.delete(instance);
        this.#queue.unshift(instance);
        this.#running--;
        this.#wake();
        return undefined;
      }
      if (this.#running === 0) return undefined;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /**
   * For a job whose instance ended without finishing: whether it was lost with its host (the host is down),
   * up to MAX_HOST_LOSSES times per instance. A lost instance must not be recorded: `end` queues it again.
   */
  async lost(job: Job): Promise<boolean> {
    if (!this.pool || !job.host) return false;
    if (!(await this.pool.lost(job.host))) return false;
    const id = job.instance.instance_id;
    const losses = (this.#losses.get(id) ?? 0) + 1;
    this.#losses.set(id, losses);
    return losses <= MAX_HOST_LOSSES;
  }

  /**
   * For a job whose instance ended without finishing on Kubernetes: whether `error` says its pod was lost
   * (deleted, evicted, its node gone), up to MAX_POD_LOSSES times per instance: then `end` queues it again.
   */
  lostPod(job: Job, error: unknown): boolean {
    if (!(error instanceof PodLostError)) return false;
    const id = job.instance.instance_id;
    const losses = (this.#losses.get(id) ?? 0) + 1;
    this.#losses.set(id, losses);
    return losses <= MAX_POD_LOSSES;
  }

  /** How many times the instance was lost with a host (or its pod) so far. */
  losses(instanceId: string): number {
    return this.#losses.get(instanceId) ?? 0;
  }

  /**
   * The job is over: frees its host slot (`ran`: its container ran, so the host has its image) and, when
   * `requeue` (lost, or handed back by a stopping worker), puts the instance back at the front of the queue.
   */
  end(job: Job, outcome: { ran?: boolean; requeue?: boolean } = {}): void {
    this.#running--;
    this.#taken.delete(job.instance);
    if (job.host) this.pool?.release(job.host, job.instance.instance_id, Boolean(outcome.ran), job.image);
    if (outcome.requeue) this.#queue.unshift(job.instance);
    this.#wake();
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}
