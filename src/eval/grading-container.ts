import { randomBytes } from "node:crypto";
import os from "node:os";
import type Docker from "dockerode";
import { CONTAINER_LABELS, CONTAINER_PREFIX } from "../environments/docker/container-labels.js";
import {
  type LiveContainer,
  registerContainer,
  unregisterContainer,
} from "../environments/docker/live-containers.js";
import { daemonMessage, ensureImage } from "../environments/docker/pull.js";
import { type ExecCollectOptions, type ExecResult, execCollect } from "./container-exec.js";
import type { EvalInstance } from "./eval-instance.js";

/** What a grading does in its container: a Docker container's, or a pod's (grading-pod.ts). */
export interface GradingBox {
  /** The container's id (run_instance.log names it). */
  readonly id: string;
  /** Runs `cmd` with stdout and stderr merged in arrival order (execCollect's contract). */
  exec(cmd: string[], options?: ExecCollectOptions): Promise<ExecResult>;
  /** Extracts a tar archive at `/`. */
  putArchive(tar: Buffer): Promise<void>;
  /** Undefined while the container runs; else why not (stopped from outside, gone, its daemon unreachable). */
  stopped(): Promise<string | undefined>;
}

/** A fresh container of an instance's image, started and idle, for one grading (never reused). */
export interface GradingContainer {
  name: string;
  box: GradingBox;
  /** Force-removes it (once, however often called) and forgets it; rejects with the daemon's error. */
  remove(): Promise<void>;
}

/** A grading container in Docker. */
export interface DockerGradingContainer extends GradingContainer {
  container: Docker.Container;
}

/** A Docker container as a grading's box. */
export function dockerBox(container: Docker.Container): GradingBox {
  return {
    id: container.id,
    exec: (cmd, options) => execCollect(container, cmd, options),
    putArchive: async (tar) => {
      await container.putArchive(tar, { path: "/" });
    },
    stopped: async () => {
      try {
        const state = (await container.inspect()).State;
        if (state.Running) return undefined;
        return `the grading container stopped during the grading (${state.Status}, exit code ${state.ExitCode})`;
      } catch (error) {
        return `the grading container is gone: ${daemonMessage(error)}`;
      }
    },
  };
}

export interface GradingContainerOptions {
  docker: Docker;
  instance: EvalInstance;
  runId: string;
  /** Kept containers are labelled so and not registered for removal on Ctrl-C. */
  keep?: boolean;
  /** Docker network mode (default: the daemon's default network). */
  network?: string;
  pullTimeoutSeconds?: number;
  onProgress?: (line: string) => void;
  /** Told once the image is there and the container is being created. */
  onCreating?: () => void;
  /** Told the container once it is created (before it starts). */
  onCreated?: (container: GradingContainer) => void;
}

function containerName(instanceId: string): string {
  const slug = instanceId
    .replace(/[^a-zA-Z0-9_.-]+/g, "-")
    .replace(/^[^a-zA-Z0-9]+/, "")
    .slice(0, 48);
  return `${CONTAINER_PREFIX}eval-${slug}-${randomBytes(4).toString("hex")}`;
}

/**
 * Pulls the instance's image when missing, then creates and starts a container of it that idles
 * (`tail -f /dev/null`) as the harness's does, labelled like swerun's other containers. Unless `keep`, it
 * is registered so that Ctrl-C removes it, and one that fails to start is removed before this throws.
 */
export async function startGradingContainer(
  options: GradingContainerOptions,
): Promise<DockerGradingContainer> {
  const { docker, instance } = options;
  await ensureImage(docker, instance.image, {
    timeoutSeconds: options.pullTimeoutSeconds ?? 600,
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
  options.onCreating?.();
  const name = containerName(instance.instance_id);
  const container = await docker.createContainer({
    name,
    Image: instance.image,
    Cmd: ["tail", "-f", "/dev/null"],
    User: "root",
    Labels: {
      [CONTAINER_LABELS.runId]: options.runId,
      [CONTAINER_LABELS.instanceId]: instance.instance_id,
      [CONTAINER_LABELS.pid]: String(process.pid),
      [CONTAINER_LABELS.host]: os.hostname(),
      [CONTAINER_LABELS.keep]: String(Boolean(options.keep)),
    },
    HostConfig: { CapAdd: ["SYS_ADMIN"], ...(options.network ? { NetworkMode: options.network } : {}) },
  });
  let removal: Promise<void> | undefined;
  const remove = () => {
    removal ??= container.remove({ force: true }).finally(() => unregisterContainer(live));
    return removal;
  };
  const live: LiveContainer = { name, remove: () => remove().catch(() => {}) };
  if (!options.keep) registerContainer(live);
  const grading: DockerGradingContainer = { name, container, box: dockerBox(container), remove };
  options.onCreated?.(grading);
  try {
    await container.start();
  } catch (error) {
    if (!options.keep) await live.remove();
    throw error;
  }
  return grading;
}
