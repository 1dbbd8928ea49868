import os from "node:os";
import type Docker from "dockerode";
import { translateRunArgs } from "../../config/docker-run-args.js";
import type { DockerEnvironmentConfig } from "../../config/schema.js";
import { UserError } from "../../errors.js";
import { chaosPoint } from "../../util/chaos.js";
import type { EnvironmentContext } from "../environment.js";
import {
  closeDockerClient,
  connectDocker,
  type DockerEndpoint,
  DockerUnavailableError,
  isConnectionError,
  unreachableMessage,
} from "./client.js";
import { removeContainer } from "./container.js";
import { CONTAINER_LABELS } from "./container-labels.js";
import { type LiveContainer, registerContainer, unregisterContainer } from "./live-containers.js";
import { daemonMessage } from "./pull.js";
import { DockerSession, sessionCommand } from "./session.js";

/** The container-create request: the `sleep` container, run_args translated, container_options merged on top. */
export function createOptions(config: DockerEnvironmentConfig, context: EnvironmentContext, name: string) {
  const translated = translateRunArgs(config.run_args, { allowPrivileged: config.allow_privileged });
  const { HostConfig, Labels, ...rest } = config.container_options as {
    HostConfig?: Record<string, unknown>;
    Labels?: Record<string, string>;
  };
  const labels: Record<string, string> = {
    [CONTAINER_LABELS.runId]: context.runId,
    [CONTAINER_LABELS.instanceId]: context.instanceId ?? "",
    [CONTAINER_LABELS.pid]: String(process.pid),
    [CONTAINER_LABELS.host]: os.hostname(),
    [CONTAINER_LABELS.keep]: String(config.keep_container),
  };
  // A session container's PID 1 is the session's shell on an open stdin, which closes when swerun's
  // connection does; what it prints is for swerun only, so the daemon keeps no log of it.
  const session =
    config.exec_mode === "session"
      ? { Cmd: sessionCommand(config.interpreter), OpenStdin: true, StdinOnce: true, AttachStdin: true }
      : { Cmd: ["sleep", config.container_timeout] };
  const options: Docker.ContainerCreateOptions & { platform?: string } = {
    name,
    Image: config.image,
    ...session,
    WorkingDir: config.cwd || "/",
    Env: translated.env,
    ...(translated.user ? { User: translated.user } : {}),
    ...(translated.platform ? { platform: translated.platform } : {}),
    ...rest,
    Labels: { ...translated.labels, ...Labels, ...labels },
    HostConfig: {
      ...(config.exec_mode === "session" ? { LogConfig: { Type: "none", Config: {} } } : {}),
      ...translated.hostConfig,
      ...HostConfig,
    },
  };
  return { options, platform: translated.platform };
}

/** What a failed startup tells the user: the daemon unreachable, or the daemon's reason. */
export function startupError(error: unknown, image: string, endpoint: DockerEndpoint): Error {
  if (error instanceof UserError) return error;
  if (isConnectionError(error)) return new DockerUnavailableError(unreachableMessage(endpoint, error));
  return new UserError(`Could not start a Docker container from image "${image}": ${daemonMessage(error)}`);
}

/**
 * A container being started: registered for removal before anything exists (`pending`), so an interrupt at
 * any point of the startup still removes it; `abandon` undoes what was done when the startup fails.
 */
export class ContainerStartup {
  readonly name: string;
  readonly pending: LiveContainer;
  session: DockerSession | undefined;
  #docker: Docker | undefined;
  #created: Docker.Container | undefined;
  #cancelled = false;
  #creating: Promise<unknown> = Promise.resolve();

  constructor(name: string) {
    this.name = name;
    this.pending = {
      name,
      remove: async () => {
        this.#cancelled = true;
        await this.#creating.catch(() => {});
        if (this.#created) await removeContainer(this.#created).catch(() => {});
      },
    };
    registerContainer(this.pending);
  }

  /** Throws when an interrupt removed the container while it was starting. */
  checkCancelled(): void {
    if (this.#cancelled) throw new UserError(`Interrupted while starting Docker container ${this.name}`);
  }

  async connect(endpoint: DockerEndpoint): Promise<Docker> {
    const client = await connectDocker(endpoint);
    this.#docker = client;
    this.checkCancelled();
    return client;
  }

  /**
   * Creates the container (attaching the shell session first when `withSession`) and starts it. An image
   * without /bin/sh cannot run the session: then no container, and `fallback` says why.
   */
  async start(
    client: Docker,
    options: Docker.ContainerCreateOptions,
    withSession: boolean,
  ): Promise<{ container: Docker.Container | undefined; fallback: string }> {
    const starting = client.createContainer(options).then(async (container) => {
      this.#created = container;
      chaosPoint("container-created");
      this.session = withSession ? await DockerSession.attach(container) : undefined;
      await container.start();
      return container;
    });
    this.#creating = starting;
    let fallback = "";
    const container = await starting.catch((error: unknown) => {
      if (!this.session || !/\/bin\/sh\b.*(no such file|not found)/i.test(daemonMessage(error))) throw error;
      fallback = "it has no /bin/sh for swerun's shell session";
      return undefined;
    });
    return { container, fallback };
  }

  /** Unregisters the container, closes the session, removes the container and closes the client. */
  async abandon(): Promise<void> {
    unregisterContainer(this.pending);
    this.session?.close();
    if (this.#created) await removeContainer(this.#created).catch(() => {});
    if (this.#docker) closeDockerClient(this.#docker);
  }
}
