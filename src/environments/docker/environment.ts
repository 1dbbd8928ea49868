import { randomBytes } from "node:crypto";
import os from "node:os";
import type Docker from "dockerode";
import { translateRunArgs } from "../../config/docker-run-args.js";
import type { DockerEnvironmentConfig } from "../../config/schema.js";
import { UserError } from "../../errors.js";
import type { Action, ExecOutput } from "../../messages.js";
import { chaosPoint } from "../../util/chaos.js";
import { registerSecret } from "../../util/secrets.js";
import { actionEnv } from "../action-env.js";
import type { Environment, EnvironmentContext, ExecuteOptions } from "../environment.js";
import { ENVIRONMENT_TYPES } from "../environment-types.js";
import {
  closeDockerClient,
  configEndpoint,
  connectDocker,
  type DockerEndpoint,
  DockerUnavailableError,
  isConnectionError,
  unreachableMessage,
} from "./client.js";
import { containerPlatform, hasBinSh, removeContainer, statusCode } from "./container.js";
import { goneReason } from "./container-gone.js";
import { BIN_SH, isRuntimeRefusal, runExec, whileNoProcess } from "./exec.js";
import { type LiveContainer, registerContainer, unregisterContainer } from "./live-containers.js";
import { daemonMessage, ensureImage } from "./pull.js";
import {
  DockerSession,
  isForkFailure,
  SESSION_MAX_COMMAND,
  SessionEndedError,
  sessionCommand,
} from "./session.js";

/** The container could not start the action's process: its runtime refused the exec, or the session could not fork. */
const couldNotStart = (output: ExecOutput) => isRuntimeRefusal(output) || isForkFailure(output);

export { SESSION_MAX_COMMAND };

/** Every container swerun creates is named `swerun-...`. */
export const CONTAINER_PREFIX = "swerun-";

/** Labels on swerun's containers; `swerun cleanup` finds leftovers by them. */
export const CONTAINER_LABELS = {
  runId: "swerun.run_id",
  instanceId: "swerun.instance_id",
  /** The process and machine that created the container, to tell a crashed run from a live one. */
  pid: "swerun.pid",
  host: "swerun.host",
  keep: "swerun.keep",
} as const;

/** The environment is broken: its container is gone or stopped. */
export class DockerContainerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DockerContainerError";
  }
}

function containerName(context: EnvironmentContext): string {
  const slug = (context.instanceId || context.runId || "run")
    .replace(/[^a-zA-Z0-9_.-]+/g, "-")
    .replace(/^[^a-zA-Z0-9]+/, "")
    .slice(0, 48);
  return `${CONTAINER_PREFIX}${slug ? `${slug}-` : ""}${randomBytes(4).toString("hex")}`;
}

/** The container-create request: the `sleep` container, run_args translated, container_options merged on top. */
function createOptions(config: DockerEnvironmentConfig, context: EnvironmentContext, name: string) {
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
function startupError(error: unknown, image: string, endpoint: DockerEndpoint): Error {
  if (error instanceof UserError) return error;
  if (isConnectionError(error)) return new DockerUnavailableError(unreachableMessage(endpoint, error));
  return new UserError(`Could not start a Docker container from image "${image}": ${daemonMessage(error)}`);
}

/**
 * A container being started: registered for removal before anything exists (`pending`), so an interrupt at
 * any point of the startup still removes it; `abandon` undoes what was done when the startup fails.
 */
class ContainerStartup {
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

/**
 * Runs the actions of a run in one long-lived container, through the Docker Engine API: written to the
 * shell session that is the container's PID 1 (exec_mode session, see session.ts), or one exec
 * each in a container whose PID 1 is `sleep container_timeout` (exec_mode exec). The container is removed
 * by `close()` unless keep_container is set.
 */
export class DockerEnvironment implements Environment {
  readonly config: DockerEnvironmentConfig;
  readonly containerName: string;
  readonly containerId: string;
  readonly #docker: Docker;
  readonly #container: Docker.Container;
  readonly #endpoint: DockerEndpoint;
  readonly #context: EnvironmentContext;
  readonly #live: LiveContainer;
  #platform: Record<string, string> = {};
  #closing: Promise<void> | undefined;
  /** The container's PID 1 in exec_mode session; undefined in exec mode. */
  #session: DockerSession | undefined;
  /** What runs swerun's scripts in the container: /bin/sh, or the interpreter in an image without it. */
  #shell: string[] = BIN_SH;
  /** When swerun asked for the container to start (ms): how long it lived, when it is gone. */
  #startedAt = Date.now();

  private constructor(
    config: DockerEnvironmentConfig,
    context: EnvironmentContext,
    docker: Docker,
    endpoint: DockerEndpoint,
    container: Docker.Container,
    name: string,
    live: LiveContainer,
  ) {
    this.config = config;
    this.#context = context;
    this.#docker = docker;
    this.#endpoint = endpoint;
    this.#container = container;
    this.containerName = name;
    this.containerId = container.id;
    this.#live = live;
  }

  /** Connects to the daemon, pulls the image when missing, and starts the run's container. */
  static async create(
    config: DockerEnvironmentConfig,
    context: EnvironmentContext,
  ): Promise<DockerEnvironment> {
    // Forwarded host values are secrets: whatever a command prints of them is redacted from what swerun writes.
    for (const name of config.forward_env) registerSecret(process.env[name]);
    if (!config.image) {
      throw new UserError(
        "environment.image: the docker environment needs an image (e.g. -c environment.image=ubuntu:24.04)",
      );
    }
    const endpoint = configEndpoint(config);
    const startup = new ContainerStartup(containerName(context));
    try {
      const { options, platform } = createOptions(config, context, startup.name);
      const client = await startup.connect(endpoint);
      await ensureImage(client, config.image, {
        timeoutSeconds: config.pull_timeout,
        platform,
        onProgress: context.onProgress,
      });
      startup.checkCancelled();
      const startedAt = Date.now();
      const { container, fallback } = await startup.start(client, options, config.exec_mode === "session");
      startup.checkCancelled();
      const session = startup.session;
      const lifetime = { lifetime: config.container_timeout, keep: config.keep_container };
      if (!container || (session && !(await session.begin(lifetime)))) {
        startup.checkCancelled();
        // The image's /bin/sh cannot run the session: a `sleep` container of its own, one exec per action.
        await startup.abandon();
        report(context)(
          `Docker image ${config.image}: ${fallback || "its /bin/sh did not start swerun's shell session"}; running one exec per action (exec_mode: exec)`,
        );
        return await DockerEnvironment.create({ ...config, exec_mode: "exec" }, context);
      }
      startup.checkCancelled();
      unregisterContainer(startup.pending);
      const environment = await DockerEnvironment.#started(
        config,
        context,
        client,
        endpoint,
        container,
        startup.name,
        session,
      );
      environment.#startedAt = startedAt;
      return environment;
    } catch (error) {
      await startup.abandon();
      throw startupError(error, config.image, endpoint);
    }
  }

  /** The environment of a started container, registered for removal on exit, its shell and platform known. */
  static async #started(
    config: DockerEnvironmentConfig,
    context: EnvironmentContext,
    client: Docker,
    endpoint: DockerEndpoint,
    container: Docker.Container,
    name: string,
    session: DockerSession | undefined,
  ): Promise<DockerEnvironment> {
    const live: LiveContainer = { name, remove: () => environment.close() };
    const environment = new DockerEnvironment(config, context, client, endpoint, container, name, live);
    environment.#session = session;
    registerContainer(live);
    // Without /bin/sh, swerun's own scripts (the kill of a timed-out action) run in the interpreter.
    if (!session && !(await hasBinSh(container))) environment.#shell = config.interpreter;
    environment.#platform = session
      ? session.platform
      : await containerPlatform(container, environment.#shell);
    return environment;
  }

  async execute(action: Action, options: ExecuteOptions = {}): Promise<ExecOutput> {
    if (this.#closing)
      throw new DockerContainerError(`Docker container ${this.containerName} was already removed`);
    const env = actionEnv(this.config);
    const request = {
      workdir: options.cwd || this.config.cwd || "/",
      timeoutSeconds: options.timeout ?? this.config.timeout,
      maxOutputBytes: this.config.max_output_bytes,
      signal: options.signal,
    };
    try {
      // Until the container can start a process again (processes a timeout could not kill hold its pids
      // limit), the action is tried again within its timeout.
      return await whileNoProcess(request.timeoutSeconds, request.signal, couldNotStart, (killAfterMs) =>
        this.#executeOnce(action.command, { ...request, killAfterMs }, env),
      );
    } catch (error) {
      if (isConnectionError(error))
        throw new DockerUnavailableError(unreachableMessage(this.#endpoint, error));
      const code = statusCode(error);
      const detail =
        code === 404 || code === 409
          ? daemonMessage(error)
          : error instanceof SessionEndedError
            ? "its shell session ended"
            : undefined;
      if (detail === undefined) throw error;
      const why = await goneReason(this.#container, this.#startedAt, this.config.container_timeout);
      throw new DockerContainerError(
        `Docker container ${this.containerName} is gone or stopped (${detail}): ${why}`,
      );
    }
  }

  /** One try of an action: in the shell session, or as an exec of its own. */
  async #executeOnce(
    command: string,
    request: {
      workdir: string;
      timeoutSeconds: number;
      killAfterMs: number;
      maxOutputBytes: number;
      signal?: AbortSignal;
    },
    env: string[],
  ): Promise<ExecOutput> {
    // The session reads the cwd as one line and the command line by line with shell builtins, which
    // grows slow past tens of KB: a cwd holding a newline or a long command takes an exec of its own,
    // as does every action while the session is busy with one given up on.
    const session = this.#session;
    if (
      session &&
      (session.available || !session.alive) &&
      !request.workdir.includes("\n") &&
      command.length <= SESSION_MAX_COMMAND
    )
      return session.run({ ...request, env, command });
    return runExec(this.#container, {
      ...request,
      argv: [...this.config.interpreter, command],
      shell: this.#shell,
      env,
    });
  }

  /** The container's `platform.uname()` fields (system, node, release, version, machine), then the config. */
  templateVars(): Record<string, unknown> {
    return { ...this.#platform, ...this.config };
  }

  /** The config; forward_env holds names only, so no host value is ever recorded. */
  serialize() {
    return {
      environment: { ...this.config },
      environment_type: ENVIRONMENT_TYPES.docker,
    };
  }

  /**
   * Removes the container (or, with keep_container, says how to enter it). Safe to call twice. Never throws:
   * a container it cannot remove is reported, with the command that will, so it cannot mask the run's own error.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      unregisterContainer(this.#live);
      this.#session?.close();
      const say = report(this.#context);
      const host = this.config.docker_hosts?.length ? ` --docker-host ${this.#endpoint.host}` : "";
      const cleanup = `swerun cleanup --run-id ${this.#context.runId}${host}`;
      try {
        if (this.config.keep_container) {
          say(
            `Kept Docker container ${this.containerName} (keep_container: true). Enter it with: docker exec -it ${this.containerName} bash` +
              ` — remove it with: docker rm -f ${this.containerName} (or ${cleanup})`,
          );
        } else {
          await removeContainer(this.#container);
        }
      } catch (error) {
        const reason = isConnectionError(error)
          ? unreachableMessage(this.#endpoint, error)
          : daemonMessage(error);
        say(
          `Could not remove Docker container ${this.containerName}: ${reason}. Remove it later with: ${cleanup}`,
        );
      } finally {
        closeDockerClient(this.#docker);
      }
    })();
    return this.#closing;
  }
}

/** Where the environment's progress lines go: the context's reporter, else stderr. */
function report(context: EnvironmentContext): (line: string) => void {
  return context.onProgress ?? ((line) => process.stderr.write(`${line}\n`));
}
