import type Docker from "dockerode";
import type { DockerHostConfig } from "../config/docker-hosts.js";
import type { KubernetesEnvironmentConfig } from "../config/schema.js";
import type { Instance } from "../datasets/dataset.js";
import { DockerHost } from "../environments/docker/hosts.js";
import type { EvalInstance } from "../eval/eval-instance.js";
import type { StartHooks } from "../eval/grade-instance.js";
import { type GradingContainer, startGradingContainer } from "../eval/grading-container.js";
import { fixtureImageReady } from "../eval/grading-driver.js";
import type { HoldImage } from "./images.js";

/** How long a host may take to answer the ping after a failed grading. */
const PING_MS = 5000;

/** What `GradingHosts` needs of the grader's options (grader.ts's `BatchGraderOptions`). */
export interface GradingHostsOptions {
  docker?: Docker;
  kubernetes?: KubernetesEnvironmentConfig;
  hosts?: DockerHostConfig[];
  hostsSource?: string;
  rows: Instance[];
  datasetDir?: string;
  network?: string;
  say: (line: string) => void;
}

/**
 * Where a batch's gradings run: the batch's daemon, each instance's host of a pool (told by `hostOf`), or
 * a pod on its cluster; their images (built for a bundled instance, held through the batch's images) and
 * their fresh containers; another host that answers when one went away.
 */
export class GradingHosts {
  readonly #options: GradingHostsOptions;
  readonly #containerRunId: string;
  readonly #hostOf: (instanceId: string) => DockerHostConfig | undefined;
  readonly #rows: Map<string, Instance>;
  /** A client per host of the pool, by address. */
  readonly #daemons: Map<string, DockerHost>;
  /** The batch's images (a Docker batch): gradings get their images through them. */
  #images: HoldImage | undefined;

  constructor(
    options: GradingHostsOptions,
    containerRunId: string,
    hostOf: (instanceId: string) => DockerHostConfig | undefined,
  ) {
    this.#options = options;
    this.#containerRunId = containerRunId;
    this.#hostOf = hostOf;
    this.#rows = new Map(options.rows.map((row) => [row.instance_id, row]));
    const source = options.hostsSource ?? "--docker-host";
    this.#daemons = new Map((options.hosts ?? []).map((host) => [host.host, new DockerHost(host, source)]));
  }

  /** The batch's images, which gradings pull their images through from now on. */
  useImages(hold: HoldImage): void {
    this.#images = hold;
  }

  /** The instance's host of the pool, if it has one. */
  daemon(instanceId: string): DockerHost | undefined {
    const host = this.#hostOf(instanceId);
    return host ? this.#daemons.get(host.host) : undefined;
  }

  /** The Docker client of the instance's host, or the batch's daemon. */
  client(instanceId: string): Docker {
    const docker = this.daemon(instanceId)?.client() ?? this.#options.docker;
    if (!docker) throw new Error(`no Docker host known for ${instanceId}`);
    return docker;
  }

  /** A fresh grading container for `instance`: a pod on the batch's cluster, or a container on its daemon. */
  async startContainer(instance: EvalInstance, hooks?: StartHooks): Promise<GradingContainer> {
    const kubernetes = this.#options.kubernetes;
    if (kubernetes) {
      const { startGradingPod } = await import("../eval/grading-pod.js");
      return startGradingPod({
        environment: kubernetes,
        instance,
        runId: this.#containerRunId,
        ...(hooks ? { hooks } : {}),
      });
    }
    return startGradingContainer({
      docker: this.client(instance.instance_id),
      instance,
      runId: this.#containerRunId,
      ...(this.#options.network ? { network: this.#options.network } : {}),
      ...(hooks ? hooks : {}),
    });
  }

  /** After a failed grading on `daemon`: when it is down, another host that answers (said; the caller notes it). */
  async hostInstead(instanceId: string, daemon: DockerHost): Promise<DockerHost | undefined> {
    const down = await daemon.ping(PING_MS);
    if (down === undefined) return undefined;
    const other = await this.#answeringHost(daemon.name);
    if (!other) return undefined;
    this.#options.say(
      `eval ${instanceId}: grading lost with Docker host ${daemon.name} (${down}); graded again on ${other.name}`,
    );
    return other;
  }

  /** The first host other than `except` that answers a ping. */
  async #answeringHost(except: string): Promise<DockerHost | undefined> {
    for (const daemon of this.#daemons.values())
      if (daemon.name !== except && (await daemon.ping(PING_MS)) === undefined) return daemon;
    return undefined;
  }

  /**
   * The instance's image held on `daemon` through the batch's images, when the batch has them (not once
   * `aborted`); a hold that fails is said and the grading goes on.
   */
  async holdImage(
    instance: EvalInstance,
    daemon: DockerHost | undefined,
    aborted: boolean,
  ): Promise<() => void> {
    if (!this.#images || aborted) return () => {};
    return this.#images(instance.image, daemon?.config.host).catch((error: unknown) => {
      this.#options.say(
        `eval ${instance.instance_id}: ${error instanceof Error ? error.message : String(error)}`,
      );
      return () => {};
    });
  }

  /** The instance's image on its daemon: built there for a bundled instance (a cluster's nodes must have it). */
  imageReady(instance: EvalInstance): Promise<void> {
    if (this.#options.kubernetes) return Promise.resolve();
    const row = this.#rows.get(instance.instance_id);
    return fixtureImageReady(
      instance,
      row,
      this.#options.datasetDir,
      this.daemon(instance.instance_id)?.endpoint,
    );
  }

  /** Closes the connections to the pool's hosts. */
  close(): void {
    for (const daemon of this.#daemons.values()) daemon.close();
  }
}
