import { randomBytes } from "node:crypto";
import os from "node:os";
import type Docker from "dockerode";
import { CONTAINER_LABELS, CONTAINER_PREFIX } from "../environments/docker/environment.js";
import { ensureImage } from "../environments/docker/pull.js";
import {
  type LiveContainer,
  registerContainer,
  unregisterContainer,
} from "../environments/docker/registry.js";
import type { EvalInstance } from "./eval-instance.js";

/** A fresh container of an instance's image, started and idle, for one grading (never reused). */
export interface GradingContainer {
  name: string;
  container: Docker.Container;
  /** Force-removes it (once, however often called) and forgets it; rejects with the daemon's error. */
  remove(): Promise<void>;
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
export async function startGradingContainer(options: GradingContainerOptions): Promise<GradingContainer> {
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
  const grading: GradingContainer = { name, container, remove };
  options.onCreated?.(grading);
  try {
    await container.start();
  } catch (error) {
    if (!options.keep) await live.remove();
    throw error;
  }
  return grading;
}
