import { durationSeconds } from "../../config/docker.js";
import type { KubernetesEnvironmentConfig } from "../../config/schema.js";
import { UserError } from "../../errors.js";
import type { Action, ExecOutput } from "../../messages.js";
import { registerSecret } from "../../util/secrets.js";
import { actionEnv } from "../action-env.js";
import { type LiveContainer, registerContainer, unregisterContainer } from "../docker/live-containers.js";
import { SESSION_MAX_COMMAND } from "../docker/session.js";
import type { Environment, EnvironmentContext, ExecuteOptions } from "../environment.js";
import { ENVIRONMENT_TYPES } from "../environment-types.js";
import { apiMessage, apiStatus, type KubeClient, kubeClient } from "./client.js";
import { PodEndedError, PodLostError } from "./errors.js";

export { PodLostError };

import { type PodActionRequest, PodExecError, runPodExec } from "./pod-exec.js";
import { PodSession, PodSessionError } from "./pod-session.js";
import { podManifest, podName, runSelector } from "./pod-spec.js";
import { createAndStartPod } from "./pod-startup.js";
import { lostReason } from "./pod-state.js";
import { RunPodWatch } from "./pod-watch.js";
import { acquireRunAnchor, releaseRunAnchor } from "./run-anchor.js";

/** How long an action that failed for want of its pod waits for the cluster to say why. */
const POD_STATE_MS = 15_000;

/** What the environment keeps of its pod while it runs. */
interface Running {
  client: KubeClient;
  name: string;
  watch: RunPodWatch;
  unsubscribe: () => void;
  /** Whether the pod was given an owner (a kept pod is not: deleting the run's anchor must not delete it). */
  owned: boolean;
}

/**
 * Runs the actions of a run in one pod of a Kubernetes cluster, through the API server: written to a
 * long-lived exec running swerun's session loop (exec_mode session, see pod-session.ts), or one pods/exec
 * each (exec_mode exec). The pod's container sleeps out `container_timeout` and the pod is bounded by
 * activeDeadlineSeconds; it belongs to the run's anchor ConfigMap and is deleted by `close()` unless
 * keep_container is set. A pod that is lost makes `execute` throw PodLostError.
 */
export class KubernetesEnvironment implements Environment {
  readonly config: KubernetesEnvironmentConfig;
  readonly podName: string;
  readonly #context: EnvironmentContext;
  readonly #running: Running;
  readonly #live: LiveContainer;
  #session: PodSession | undefined;
  /** The session was tried while the pod started (`#session` says whether it opened). */
  #probed = false;
  #probing: Promise<boolean> | undefined;
  #platform: Record<string, string> = {};
  /** Aborted, with the reason, once the watch says the pod is lost. */
  readonly #lostController = new AbortController();
  #closing: Promise<void> | undefined;
  /** When the pod's lifetime (its `sleep` of container_timeout) is over at the latest, in ms since the epoch. */
  readonly #endsBy: number;

  private constructor(config: KubernetesEnvironmentConfig, context: EnvironmentContext, running: Running) {
    this.config = config;
    this.#context = context;
    this.#running = running;
    this.podName = running.name;
    this.#live = { name: running.name, remove: () => this.close() };
    this.#endsBy = Date.now() + durationSeconds(config.container_timeout) * 1000;
  }

  /** Where the pod is: its namespace, name and node, as `kubectl` names them. */
  get namespace(): string {
    return this.#running.client.namespace;
  }

  /** Creates the run's pod, waits until it runs (pull_timeout), and starts its session. */
  static async create(
    config: KubernetesEnvironmentConfig,
    context: EnvironmentContext,
  ): Promise<KubernetesEnvironment> {
    for (const name of config.forward_env) registerSecret(process.env[name]);
    if (!config.image)
      throw new UserError(
        "environment.image: the kubernetes environment needs an image (e.g. -c environment.image=ubuntu:24.04)",
      );
    const client = kubeClient(config);
    const name = podName(context.instanceId || context.runId || "run");
    const owned = !config.keep_container;
    const watch = RunPodWatch.acquire(client, runSelector(context.runId));
    const anchor = owned ? acquireRunAnchor(client, context.runId) : Promise.resolve(undefined);
    const running: Running = { client, name, watch, unsubscribe: () => {}, owned };
    const environment = new KubernetesEnvironment(config, context, running);
    // Registered before the pod exists: an interrupt during the start deletes it.
    registerContainer(environment.#live);
    try {
      const [owner] = await Promise.all([anchor, watch.ready()]);
      const manifest = podManifest(config, {
        name,
        runId: context.runId,
        instanceId: context.instanceId,
        owner: owner ?? { name: "", uid: "" },
      });
      if (!owner) delete manifest.metadata?.ownerReferences;
      await createAndStartPod(client, watch, manifest, {
        timeoutSeconds: config.pull_timeout,
        onPhase: (phase, reason) => context.onPodPhase?.(phase, reason),
        ...(config.exec_mode === "session" ? { probe: () => environment.#probeSession() } : {}),
      });
      context.onPodPhase?.("running", "");
      running.unsubscribe = watch.subscribe(name, (pod) => environment.#noteLost(lostReason(pod)));
      await environment.#startSession();
      return environment;
    } catch (error) {
      await environment.close();
      // A pod lost while its session started is lost like one lost later.
      const lost = environment.lost;
      if (lost && !(error instanceof PodLostError))
        throw new PodLostError(`Pod ${name} in namespace ${client.namespace} is lost: ${lost}`);
      throw error;
    }
  }

  /**
   * While the pod starts: opens its session once its container answers (before the kubelet reports it
   * running). False while it does not answer yet; true once the session is open or cannot run there.
   */
  #probeSession(): Promise<boolean> {
    const { client, name } = this.#running;
    this.#probing = (async () => {
      const session = await PodSession.open(
        client,
        name,
        this.config.interpreter,
        this.#lostController.signal,
      );
      if (this.#closing) session?.close();
      this.#session = session;
      this.#probed = true;
      return true;
    })();
    return this.#probing;
  }

  async #startSession(): Promise<void> {
    const { client, name } = this.#running;
    // A probe still connecting when the kubelet reported the pod running: its session, if it opens.
    await this.#probing?.catch(() => false);
    if (this.config.exec_mode === "session" && !this.#probed) {
      this.#session = await PodSession.open(
        client,
        name,
        this.config.interpreter,
        this.#lostController.signal,
      );
    }
    if (this.config.exec_mode === "session" && !this.#session) {
      report(this.#context)(
        `Pod ${name}: swerun's shell session cannot run in image ${this.config.image} (it needs /bin/sh, cat and a writable /tmp); running one exec per action (exec_mode: exec)`,
      );
    }
    if (this.#session) {
      this.#platform = this.#session.platform;
      return;
    }
    const uname = await runPodExec(client, name, ["/bin/sh", "-c"], {
      command: "uname -s && uname -n && uname -r && uname -v && uname -m",
      env: [],
      workdir: "/",
      timeoutSeconds: 10,
      maxOutputBytes: 4096,
    }).catch(() => undefined);
    const lines = uname?.returncode === 0 ? uname.output.split("\n") : [];
    if (lines.length < 5) return;
    const [system = "", node = "", release = "", version = "", machine = ""] = lines;
    this.#platform = { system, node, release, version, machine };
  }

  async execute(action: Action, options: ExecuteOptions = {}): Promise<ExecOutput> {
    if (this.#closing) throw new PodLostError(`Pod ${this.podName} was already deleted`);
    this.#throwIfLost();
    const request: PodActionRequest = {
      command: action.command,
      env: actionEnv(this.config),
      workdir: options.cwd || this.config.cwd || "/",
      timeoutSeconds: options.timeout ?? this.config.timeout,
      maxOutputBytes: this.config.max_output_bytes,
      ...(options.signal ? { signal: options.signal } : {}),
      podLost: this.#lostController.signal,
    };
    try {
      // As in Docker: a cwd holding a newline or a long command takes an exec of its own.
      const session = this.#session;
      if (session && !request.workdir.includes("\n") && action.command.length <= SESSION_MAX_COMMAND)
        return await session.run(request);
      return await runPodExec(this.#running.client, this.podName, this.config.interpreter, request);
    } catch (error) {
      await this.#explain(error);
      throw error;
    }
  }

  /**
   * After an action failed for want of its pod: throws PodLostError when the pod is lost, PodEndedError when
   * its lifetime is over. The kubelet reports a pod it ended a moment after its connections close: the
   * watch is given up to POD_STATE_MS to say so; the API server is asked too (the watch may lag).
   */
  async #explain(error: unknown): Promise<void> {
    this.#throwIfLost();
    const deadline = Date.now() + POD_STATE_MS;
    for (;;) {
      const pod = await this.#running.client.core
        .readNamespacedPod({ name: this.podName, namespace: this.namespace })
        .catch((read: unknown) => (apiStatus(read) === 404 ? undefined : null));
      if (pod !== null) this.#noteLost(lostReason(pod));
      this.#throwIfLost();
      const ended =
        pod?.status?.phase === "Succeeded" ||
        pod?.status?.reason === "DeadlineExceeded" ||
        pod?.status?.containerStatuses?.[0]?.state?.terminated !== undefined;
      // Its lifetime is over: the kubelet may report so late on a loaded node, so its own clock tells too.
      if (ended || (Date.now() >= this.#endsBy && pod !== null)) throw this.#ended();
      // Running and ready as far as the cluster says: the error stands (a dropped exec, an API server error).
      const ready = pod?.status?.conditions?.find((entry) => entry.type === "Ready")?.status === "True";
      if ((ready && pod?.status?.containerStatuses?.[0]?.state?.running) || Date.now() > deadline) return;
      if (!(error instanceof PodSessionError || error instanceof PodExecError)) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  #ended(): PodEndedError {
    return new PodEndedError(
      `Pod ${this.podName} in namespace ${this.namespace} has ended: its container_timeout (${this.config.container_timeout}) passed`,
    );
  }

  /** How often the session's connection was made again after it dropped. */
  get sessionReconnects(): number {
    return this.#session?.reconnects ?? 0;
  }

  /** Why the pod is lost, once it is. */
  get lost(): string | undefined {
    const signal = this.#lostController.signal;
    return signal.aborted ? String(signal.reason) : undefined;
  }

  #noteLost(reason: string | undefined): void {
    if (reason && !this.#lostController.signal.aborted) this.#lostController.abort(reason);
  }

  #throwIfLost(): void {
    const lost = this.lost;
    if (lost) throw new PodLostError(`Pod ${this.podName} in namespace ${this.namespace} is lost: ${lost}`);
  }

  /** The pod's `platform.uname()` fields (system, node, release, version, machine), then the config. */
  templateVars(): Record<string, unknown> {
    return { ...this.#platform, ...this.config };
  }

  /** The config; forward_env holds names only, so no host value is ever recorded. */
  serialize() {
    return {
      environment: { ...this.config },
      environment_type: ENVIRONMENT_TYPES.kubernetes,
    };
  }

  /**
   * Deletes the pod (or, with keep_container, says how to enter it). Safe to call twice. Never throws: a pod
   * it cannot delete is reported with the command that will (its activeDeadlineSeconds ends it anyway).
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      const { client, name, watch, owned } = this.#running;
      unregisterContainer(this.#live);
      this.#session?.close();
      this.#running.unsubscribe();
      const say = report(this.#context);
      const namespace = client.namespace;
      try {
        if (this.config.keep_container) {
          say(
            `Kept pod ${name} (keep_container: true). Enter it with: kubectl -n ${namespace} exec -it ${name} -- bash — delete it with: kubectl -n ${namespace} delete pod ${name} (or swerun cleanup --run-id ${this.#context.runId} --kubernetes)`,
          );
        } else {
          await client.core
            .deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 })
            .catch((error: unknown) => {
              if (apiStatus(error) !== 404) throw error;
            });
        }
      } catch (error) {
        say(
          `Could not delete pod ${name} in namespace ${namespace}: ${apiMessage(error)}. Delete it later with: swerun cleanup --run-id ${this.#context.runId} --kubernetes`,
        );
      } finally {
        watch.release();
        if (owned) await releaseRunAnchor(client, this.#context.runId);
      }
    })();
    return this.#closing;
  }
}

/** Where the environment's progress lines go: the context's reporter, else stderr. */
function report(context: EnvironmentContext): (line: string) => void {
  return context.onProgress ?? ((line) => process.stderr.write(`${line}\n`));
}
