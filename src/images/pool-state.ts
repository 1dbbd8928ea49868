import type Docker from "dockerode";
import { createDockerClient } from "../environments/docker/client.js";
import { imageTags, inspectImage, normalizeImage } from "../environments/docker/images.js";
import type { ImagesRecord } from "../formats/run-json.js";
import { ImageBudget } from "./budget.js";
import { type LedgerImage, readLedger, writeLedger } from "./ledger.js";
import type { ImagePoolContext, ImagePoolOptions, PoolDaemon } from "./pool.js";

/** A daemon of the pool and the images the batch has on it. */
export interface Daemon extends PoolDaemon {
  docker: Docker;
  budget: ImageBudget;
  /** Tags on the daemon before the batch (minus what this run pulled earlier): never removed. */
  before: Set<string>;
  /** Image ids of what the batch pulled (and holds). */
  ids: Map<string, string>;
  pulls: Map<string, Promise<void>>;
  /** Pulls under way the ledger lists (image → when it started, ISO), before they end. */
  pulling: Map<string, string>;
  /** Pulled (or being pulled) ahead; no instance has started with it yet. */
  ahead: Set<string>;
  aheadPulls: number;
  /** Running instances: id → image. */
  running: Map<string, string>;
  /** Pull-ahead stops after "no space left on device" until an instance ends. */
  paused: boolean;
  /** Workers waiting for room in the budget: pulling ahead leaves the room to them. */
  wanting: number;
  /** Stops listening to the daemon's container removals. */
  unwatch: () => void;
}

/**
 * Connects to a daemon and lists its images: what is there is kept, except what this run pulled before
 * (`ledger`, a resumed batch), which counts against the budget again.
 */
export async function openDaemon(
  spec: PoolDaemon,
  budget: number | undefined,
  ledger: readonly LedgerImage[],
): Promise<Daemon> {
  const docker = createDockerClient(spec.endpoint);
  const daemon: Daemon = {
    ...spec,
    docker,
    budget: new ImageBudget(budget),
    before: new Set(),
    ids: new Map(),
    pulls: new Map(),
    pulling: new Map(),
    ahead: new Set(),
    aheadPulls: 0,
    running: new Map(),
    paused: false,
    wanting: 0,
    unwatch: () => {},
  };
  daemon.before = await imageTags(docker).catch(() => new Set<string>());
  for (const entry of ledger.filter((entry) => entry.host === spec.endpoint.host)) {
    const image = normalizeImage(entry.image);
    const found = await inspectImage(docker, image).catch(() => undefined);
    // A pull the earlier run started and was killed in: the image there now is the one it pulled.
    if (!found || (found.id !== entry.id && !entry.pulling)) continue;
    daemon.before.delete(image);
    daemon.ids.set(image, found.id);
    daemon.budget.adopt(image, found.bytes);
  }
  return daemon;
}

/**
 * What the parts of an image pool share: its daemons, options and run.json record, what it tells the batch,
 * the ledger of what it pulled, and a signal for waiting until something changes (a pull or an instance ends).
 */
export class PoolState {
  readonly daemons: Daemon[];
  readonly options: ImagePoolOptions;
  readonly record: ImagesRecord;
  readonly runId: string;
  readonly folder: string;
  readonly say: (line: string) => void;
  /** Whenever what the pool's `status()` shows changes. */
  readonly changed: () => void;
  /** The pool is closing: no more pulls ahead, no more waiting for room. */
  closed = false;
  #waiters: Array<() => void> = [];

  constructor(daemons: Daemon[], options: ImagePoolOptions, context: ImagePoolContext, record: ImagesRecord) {
    this.daemons = daemons;
    this.options = options;
    this.record = record;
    this.runId = context.runId;
    this.folder = context.folder;
    this.say = context.say;
    this.changed = context.onChange;
  }

  /** "Docker host <name>: " before a message about `daemon`, with a host pool. */
  where(daemon: Daemon): string {
    return daemon.host ? `Docker host ${daemon.host.docker.name}: ` : "";
  }

  /** run.json's `host` of an entry about `daemon`, with a host pool. */
  hostField(daemon: Daemon): { host?: string } {
    return daemon.host ? { host: daemon.host.docker.name } : {};
  }

  /** Writes the run's ledger: what this process holds and pulls, and what an earlier one left on other daemons. */
  saveLedger(): void {
    const images: LedgerImage[] = [];
    for (const daemon of this.daemons) {
      for (const [image, id] of daemon.ids) images.push({ image, host: daemon.endpoint.host, id });
      for (const [image, since] of daemon.pulling)
        if (!daemon.ids.has(image))
          images.push({ image, host: daemon.endpoint.host, id: "", pulling: since });
    }
    const earlier = readLedger(this.runId)?.images ?? [];
    // What this process does not hold any more but an earlier one pulled (and did not remove) stays listed.
    const hosts = new Set(this.daemons.map((daemon) => daemon.endpoint.host));
    const others = earlier.filter((entry) => !hosts.has(entry.host));
    writeLedger(this.runId, this.folder, [...others, ...images]);
  }

  /** Resolves at the next `wake` (a pull or an instance ended), or 5 s from now. */
  nextChange(): Promise<void> {
    return new Promise((resolve) => {
      this.#waiters.push(resolve);
      setTimeout(resolve, 5000).unref();
    });
  }

  wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }
}
