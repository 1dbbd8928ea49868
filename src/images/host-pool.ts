import type { DockerHostConfig } from "../config/docker-hosts.js";
import { cutConnections, DockerUnavailableError } from "../environments/docker/client.js";
import { DockerHost } from "../environments/docker/hosts.js";

/** One host of the pool as the display and run.json show it. */
export interface HostStatus {
  host: string;
  workers: number;
  state: "up" | "down";
  running: number;
}

/** A host of the pool with what the scheduler knows about it. */
export interface PoolHost {
  readonly docker: DockerHost;
  up: boolean;
  /** Instances running on it now. */
  readonly running: Set<string>;
  /** Whether it has an image, once asked (or once an instance ran on it). */
  readonly images: Map<string, boolean>;
  probe?: NodeJS.Timeout;
}

export interface HostPoolOptions {
  /** One line for the console and the log (a host lost, a host back, every host down). */
  say: (line: string) => void;
  /** Called whenever a host's state or load changes (for the progress display). */
  onChange?: (hosts: HostStatus[]) => void;
  /** How often a down host is pinged (default 5 s). */
  probeMs?: number;
  /** How long a ping may take before the host counts as down (default 5 s, 20 s over ssh). */
  pingTimeoutMs?: number;
  /** The run whose containers a host that answers again still holds (removed before it is used again). */
  runId?: string;
  /**
   * How long a host running instances may take to answer a ping before it counts as down (a hung or frozen
   * daemon; default 30 s): its instances are then lost, as with a host that went away.
   */
  answerTimeoutMs?: number;
}

/** How long a host running instances may take to answer (`SWERUN_DOCKER_HOST_TIMEOUT`, seconds), by default. */
export const DEFAULT_ANSWER_TIMEOUT_MS = 30_000;

/**
 * The Docker daemons of a batch. An instance goes to an up host with a free slot, a host known to have its
 * image first, then the least loaded. A host that stops answering is marked down (its running instances are
 * lost: the batch queues them again) and pinged every few seconds until it answers; once every host is
 * down the pool stops for good and the batch ends, resumable.
 */
export class HostPool {
  readonly hosts: PoolHost[];
  readonly #options: HostPoolOptions;
  #waiters: Array<() => void> = [];
  #stopped = false;
  #closed = false;

  readonly #watch: NodeJS.Timeout;

  private constructor(hosts: DockerHost[], options: HostPoolOptions) {
    this.hosts = hosts.map((docker) => ({ docker, up: true, running: new Set(), images: new Map() }));
    this.#options = options;
    // Hosts running instances are asked every few seconds whether they still answer.
    const limit = options.answerTimeoutMs ?? DEFAULT_ANSWER_TIMEOUT_MS;
    this.#watch = setInterval(() => void this.#checkHosts(limit), Math.min(5000, limit));
    this.#watch.unref();
  }

  #checking = new Set<PoolHost>();

  async #checkHosts(limit: number): Promise<void> {
    for (const host of this.hosts) {
      if (!host.up || host.running.size === 0 || this.#checking.has(host) || this.#closed) continue;
      this.#checking.add(host);
      void host.docker
        .ping(limit)
        .then((answer) => {
          if (answer !== undefined && host.up && !this.#closed)
            this.#markDown(host, answer, "stopped answering");
        })
        .finally(() => this.#checking.delete(host));
    }
  }

  /**
   * Pings every host; those that do not answer start down (said, and probed). Throws a DockerUnavailableError
   * naming each host when none answers.
   */
  static async open(
    configs: DockerHostConfig[],
    source: string,
    options: HostPoolOptions,
  ): Promise<HostPool> {
    const pool = new HostPool(
      configs.map((config) => new DockerHost(config, source)),
      options,
    );
    const answers = await Promise.all(pool.hosts.map((host) => host.docker.ping(pool.#pingTimeout(host))));
    if (answers.every((answer) => answer !== undefined)) {
      pool.close();
      throw new DockerUnavailableError(
        `No Docker host answers (${source}): ${answers.map((answer, i) => `${pool.hosts[i]?.docker.name}: ${answer}`).join("; ")}; check that each daemon runs and that \`docker -H <host> version\` works from here`,
      );
    }
    for (const [index, answer] of answers.entries()) {
      const host = pool.hosts[index];
      if (host && answer !== undefined) pool.#markDown(host, answer, "does not answer");
    }
    return pool;
  }

  /** The total worker count: the sum of the hosts'. */
  get workers(): number {
    return this.hosts.reduce((sum, host) => sum + host.docker.workers, 0);
  }

  /** True once every host was down at the same time: the batch stops. */
  get stopped(): boolean {
    return this.#stopped;
  }

  status(): HostStatus[] {
    return this.hosts.map((host) => ({
      host: host.docker.name,
      workers: host.docker.workers,
      state: host.up ? "up" : "down",
      running: host.running.size,
    }));
  }

  /**
   * A slot for `instanceId` on an up host (reserved until `release`), waiting while every up host is
   * busy; undefined once the pool has stopped. `image`: the instance's image, to prefer a host that has it.
   */
  async acquire(instanceId: string, image?: string): Promise<PoolHost | undefined> {
    for (;;) {
      if (this.#stopped || this.#closed) return undefined;
      let free = this.hosts.filter((host) => host.up && host.running.size < host.docker.workers);
      if (free.length > 0 && image) {
        // Asked once per host and image, remembered after.
        await Promise.all(
          free
            .filter((host) => !host.images.has(image))
            .map(async (host) => {
              const has = await host.docker.hasImage(image);
              if (has !== undefined) host.images.set(image, has);
            }),
        );
        free = this.hosts.filter((host) => host.up && host.running.size < host.docker.workers);
      }
      const best = pick(free, image);
      if (best) {
        best.running.add(instanceId);
        this.#changed();
        return best;
      }
      if (this.#stopped || this.#closed) return undefined;
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** Frees the slot of `instanceId`; `ran`: its container ran, so the host has `image` now. */
  release(host: PoolHost, instanceId: string, ran: boolean, image?: string): void {
    host.running.delete(instanceId);
    if (ran && image && host.up) host.images.set(image, true);
    this.#changed();
    this.#wake();
  }

  /**
   * For an instance on `host` that ended without finishing: whether it was lost with its host. True when the
   * host is down already or does not answer a ping now (it is then marked down).
   */
  async lost(host: PoolHost): Promise<boolean> {
    if (!host.up) return true;
    const answer = await host.docker.ping(this.#pingTimeout(host));
    if (answer === undefined) return false;
    this.#markDown(host, answer, "stopped answering");
    return true;
  }

  #pingTimeout(host: PoolHost): number {
    return this.#options.pingTimeoutMs ?? (host.docker.endpoint.kind === "ssh" ? 20_000 : 5_000);
  }

  #markDown(host: PoolHost, reason: string, what: string): void {
    if (!host.up) return;
    host.up = false;
    // What waits on the host now (its instances' commands, a hung daemon's requests) fails at once.
    cutConnections(host.docker.endpoint.host);
    host.images.clear();
    const running = host.running.size;
    const requeued = running > 0 ? `; its ${running} running instance(s) go back to the queue` : "";
    const probeSeconds = (this.#options.probeMs ?? 5000) / 1000;
    this.#options.say(
      `Docker host ${host.docker.name} ${what} (${reason})${requeued}; trying it again every ${probeSeconds} s`,
    );
    if (this.hosts.every((other) => !other.up)) {
      this.#stopped = true;
      this.#options.say(
        "Every Docker host is down: the batch stops. It is resumable: run the same command again (finished instances are kept).",
      );
    } else {
      host.probe = setInterval(() => void this.#probe(host), this.#options.probeMs ?? 5000);
      host.probe.unref();
    }
    this.#changed();
    this.#wake();
  }

  #probing = new Set<PoolHost>();

  async #probe(host: PoolHost): Promise<void> {
    if (this.#probing.has(host) || this.#stopped || this.#closed) return;
    this.#probing.add(host);
    try {
      if ((await host.docker.ping(this.#pingTimeout(host))) !== undefined) return;
      // What the lost instances left there (a daemon that was unreachable, not restarted, still holds them).
      const runId = this.#options.runId;
      const removed = runId ? await host.docker.removeRunContainers(runId, host.running).catch(() => []) : [];
      if (this.#stopped || this.#closed) return;
      clearInterval(host.probe);
      host.probe = undefined;
      host.up = true;
      this.#options.say(
        `Docker host ${host.docker.name} answers again: using it (${host.docker.workers} workers)${removed.length > 0 ? `; ${removed.join("; ")}` : ""}`,
      );
      this.#changed();
      this.#wake();
    } finally {
      this.#probing.delete(host);
    }
  }

  #changed(): void {
    this.#options.onChange?.(this.status());
  }

  #wake(): void {
    for (const wake of this.#waiters.splice(0)) wake();
  }

  /** For each host down now: a line saying how to remove what run `runId` may have left there. */
  leftoverHints(runId: string): string[] {
    return this.hosts
      .filter((host) => !host.up)
      .map(
        (host) =>
          `Docker host ${host.docker.name} is down: containers of this run may be left there; once it answers, remove them with: swerun cleanup --run-id ${runId} --docker-host ${host.docker.name}`,
      );
  }

  /** Stops probing and frees the connections; waiting `acquire` calls return undefined. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#watch);
    for (const host of this.hosts) {
      clearInterval(host.probe);
      host.probe = undefined;
      host.docker.close();
    }
    this.#wake();
  }
}

/** The host to use: one known to have the image, then one not known not to, then the least loaded. */
function pick(free: PoolHost[], image: string | undefined): PoolHost | undefined {
  const rank = (host: PoolHost) => {
    const has = image ? host.images.get(image) : undefined;
    return has === true ? 0 : has === undefined ? 1 : 2;
  };
  let best: PoolHost | undefined;
  for (const host of free) {
    if (!best) {
      best = host;
      continue;
    }
    const byImage = rank(host) - rank(best);
    const byLoad = host.running.size / host.docker.workers - best.running.size / best.docker.workers;
    if (byImage < 0 || (byImage === 0 && byLoad < 0)) best = host;
  }
  return best;
}
