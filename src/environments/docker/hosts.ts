import type Docker from "dockerode";
import type { DockerHostConfig } from "../../config/docker-hosts.js";
import { closeDockerClient, createDockerClient, type DockerEndpoint, hostEndpoint } from "./client.js";
import { removeContainer } from "./container.js";
import { CONTAINER_LABELS } from "./container-labels.js";

/**
 * One daemon of a host pool, as the scheduler sees it: whether it answers, whether it has an image, and
 * the run's containers on it. Instances open their own connections (their environments); this one client
 * is for these questions only.
 */
export class DockerHost {
  readonly config: DockerHostConfig;
  readonly endpoint: DockerEndpoint;
  #docker: Docker | undefined;

  constructor(config: DockerHostConfig, source: string) {
    this.config = config;
    this.endpoint = hostEndpoint(config, source);
  }

  /** The address as the user gave it, without the worker count. */
  get name(): string {
    return this.config.host;
  }

  get workers(): number {
    return this.config.workers;
  }

  /** A client of this daemon (kept open until `close`). */
  client(): Docker {
    return this.#client();
  }

  #client(): Docker {
    this.#docker ??= createDockerClient(this.endpoint);
    return this.#docker;
  }

  /** Undefined when the daemon answers a ping within `timeoutMs`, else why not (a short reason, e.g. "connect ECONNREFUSED ..."). */
  async ping(timeoutMs: number): Promise<string | undefined> {
    const docker = createDockerClient(this.endpoint);
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    try {
      await (docker.ping as (options: object) => Promise<unknown>).call(docker, {
        abortSignal: abort.signal,
      });
      return undefined;
    } catch (error) {
      // A daemon that went away leaves dead keep-alive connections behind: the next question opens new ones.
      this.close();
      if (abort.signal.aborted) return `no answer in ${timeoutMs / 1000} s`;
      return (error instanceof Error ? error.message : String(error)).trim().split("\n")[0] ?? "";
    } finally {
      clearTimeout(timer);
      closeDockerClient(docker);
    }
  }

  /** Whether the daemon has the image; undefined when it could not be asked. */
  async hasImage(image: string): Promise<boolean | undefined> {
    try {
      await this.#client().getImage(image).inspect();
      return true;
    } catch (error) {
      return (error as { statusCode?: unknown }).statusCode === 404 ? false : undefined;
    }
  }

  /**
   * Removes the containers of run `runId` on this daemon, except kept ones and those of the instances in
   * `busy` (still running here). Returns one line per container removed or not removable.
   */
  async removeRunContainers(runId: string, busy: ReadonlySet<string> = new Set()): Promise<string[]> {
    const docker = this.#client();
    const containers = await docker.listContainers({
      all: true,
      filters: { label: [`${CONTAINER_LABELS.runId}=${runId}`] },
    });
    const lines: string[] = [];
    for (const info of containers) {
      const instance = info.Labels[CONTAINER_LABELS.instanceId] ?? "";
      if (info.Labels[CONTAINER_LABELS.keep] === "true" || busy.has(instance)) continue;
      const name = (info.Names[0] ?? info.Id).replace(/^\//, "");
      try {
        await removeContainer(docker.getContainer(info.Id));
        lines.push(`removed ${name} (instance ${instance || "-"}) on ${this.name}`);
      } catch (error) {
        lines.push(
          `could not remove ${name} on ${this.name}: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    return lines;
  }

  /** Frees the client's connections (a later question opens new ones). */
  close(): void {
    if (this.#docker) closeDockerClient(this.#docker);
    this.#docker = undefined;
  }
}
