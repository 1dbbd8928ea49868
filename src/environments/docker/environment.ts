import type Docker from "dockerode";
import type { DockerEnvironmentConfig } from "../../config/schema.js";
import { UserError } from "../../errors.js";
import type { Action, ExecOutput } from "../../messages.js";
import { registerSecret } from "../../util/secrets.js";
import { actionEnv } from "../action-env.js";
import type { Environment, EnvironmentContext, ExecuteOptions } from "../environment.js";
import { ENVIRONMENT_TYPES } from "../environment-types.js";
import {
  closeDockerClient,
  configEndpoint,
  type DockerEndpoint,
  DockerUnavailableError,
  isConnectionError,
  unreachableMessage,
} from "./client.js";
import { containerPlatform, hasBinSh, removeContainer, statusCode } from "./container.js";
import { goneReason } from "./container-gone.js";
import { containerName } from "./container-labels.js";
import { ContainerStartup, createOptions, startupError } from "./container-startup.js";
import { BIN_SH, isRuntimeRefusal, runExec, whileNoProcess } from "./exec.js";
import { type LiveContainer, registerContainer, unregisterContainer } from "./live-containers.js";
import { daemonMessage, ensureImage } from "./pull.js";
import { type DockerSession, isForkFailure, SESSION_MAX_COMMAND, SessionEndedError } from "./session.js";

/** The container could not start the action's process: its runtime refused the exec, or the session could not fork. */
const couldNotStart = (output: ExecOutput) => isRuntimeRefusal(output) || isForkFailure(output);

export { SESSION_MAX_COMMAND };

/** The environment is broken: its container is gone or stopped. */
export class DockerContainerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DockerContainerError";
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
    // The shell loop reads the cwd as one line and the command line by line with shell builtins, which
    // grows slow past tens of KB: there a cwd holding a newline or a long command takes an exec of its
    // own (the Perl loop reads any). So does every action while the session is busy with one given up on.
    const session = this.#session;
    if (
      session &&
      (session.available || !session.alive) &&
      (session.readsAnyRequest || (!request.workdir.includes("\n") && command.length <= SESSION_MAX_COMMAND))
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
