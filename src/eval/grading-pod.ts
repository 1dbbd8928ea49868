import type { KubernetesEnvironmentConfig } from "../config/schema.js";
import {
  type LiveContainer,
  registerContainer,
  unregisterContainer,
} from "../environments/docker/live-containers.js";
import { apiStatus, type KubeClient, kubeClient } from "../environments/kubernetes/client.js";
import { ExecChannel } from "../environments/kubernetes/exec-channel.js";
import { podManifest, podName, runSelector } from "../environments/kubernetes/pod-spec.js";
import { createAndStartPod } from "../environments/kubernetes/pod-startup.js";
import { RunPodWatch } from "../environments/kubernetes/pod-watch.js";
import { acquireRunAnchor, releaseRunAnchor } from "../environments/kubernetes/run-anchor.js";
import type { ExecCollectOptions, ExecResult, OutputChunk } from "./container-exec.js";
import type { EvalInstance } from "./eval-instance.js";
import type { StartHooks } from "./grade-instance.js";
import type { GradingBox, GradingContainer } from "./grading-container.js";

/** How long a grading pod may live: the longest grading plus its start. */
const GRADING_POD_LIFETIME = "4h";

/** Runs `cmd` in the pod through one exec, as `execCollect` does in a Docker container. */
async function podExec(
  channelOf: (cmd: string[]) => Promise<ExecChannel>,
  cmd: string[],
  options: ExecCollectOptions = {},
): Promise<ExecResult> {
  const chunks: OutputChunk[] = [];
  const result: ExecResult = { output: Buffer.alloc(0), chunks, timedOut: false, aborted: false };
  if (options.signal?.aborted) return { ...result, aborted: true };
  // pods/exec has no working directory: a shell changes to it, then runs the command itself.
  const argv = options.workdir ? ["/bin/sh", "-c", 'cd "$0" && exec "$@"', options.workdir, ...cmd] : cmd;
  const channel = await channelOf(argv);
  channel.onData((stream, data) => {
    if (options.onChunk) options.onChunk(data, stream === 2);
    else chunks.push({ data: Buffer.from(data), stderr: stream === 2 });
  });
  const timer =
    options.timeoutSeconds !== undefined
      ? setTimeout(() => {
          result.timedOut = true;
          channel.terminate("timed out");
        }, options.timeoutSeconds * 1000)
      : undefined;
  const onAbort = () => {
    result.aborted = true;
    channel.terminate("aborted");
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  try {
    await channel.ended;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
  }
  result.output = Buffer.concat(chunks.map((chunk) => chunk.data));
  return result;
}

/** A grading pod's box: its commands and file copies through pods/exec, its state from the API server. */
function podBox(client: KubeClient, name: string): GradingBox {
  const channelOf = (cmd: string[], stdin = false) => ExecChannel.open(client, name, cmd, { stdin });
  return {
    id: `${client.namespace}/${name}`,
    exec: (cmd, execOptions) => podExec(channelOf, cmd, execOptions),
    putArchive: async (tar) => {
      const channel = await channelOf(["tar", "-x", "-f", "-", "-C", "/"], true);
      channel.write(tar);
      channel.closeStdin();
      const end = await channel.ended;
      if (end.status?.status !== "Success")
        throw new Error(`copying files into pod ${name} failed: ${end.status?.message ?? end.reason}`);
    },
    stopped: async () => {
      try {
        const pod = await client.core.readNamespacedPod({ name, namespace: client.namespace });
        if (pod.metadata?.deletionTimestamp) return "the grading pod is being deleted";
        const running = pod.status?.containerStatuses?.[0]?.state?.running;
        return running ? undefined : `the grading pod stopped during the grading (${pod.status?.phase})`;
      } catch (error) {
        return `the grading pod is gone: ${(error as Error).message.split("\n")[0]}`;
      }
    },
  };
}

export interface GradingPodOptions {
  /** The batch's kubernetes environment (its cluster, namespace, resources, pod_template). */
  environment: KubernetesEnvironmentConfig;
  instance: EvalInstance;
  /** The batch's run id: the pod is labelled with it and owned by the run's anchor, as its agents' pods are. */
  runId: string;
  hooks?: StartHooks;
}

/**
 * `swebench --eval` on Kubernetes: a fresh pod of the instance's image for one grading, on the batch's
 * cluster, run as root (as the harness's container). Its commands go through pods/exec (the test log is the
 * eval exec's output, not pods/log, which the kubelet cuts at 10 MiB). Ctrl-C deletes it.
 */
export async function startGradingPod(options: GradingPodOptions): Promise<GradingContainer> {
  const { instance, runId } = options;
  const config: KubernetesEnvironmentConfig = {
    ...options.environment,
    image: instance.image,
    container_timeout: GRADING_POD_LIFETIME,
    keep_container: false,
    pod_template: {
      ...options.environment.pod_template,
      spec: { ...options.environment.pod_template.spec, securityContext: { runAsUser: 0 } },
    },
  };
  const client = kubeClient(config);
  const name = podName(`eval-${instance.instance_id}`);
  const owner = await acquireRunAnchor(client, runId);
  const watch = RunPodWatch.acquire(client, runSelector(runId));
  let removal: Promise<void> | undefined;
  const remove = () => {
    removal ??= (async () => {
      unregisterContainer(live);
      try {
        await client.core
          .deleteNamespacedPod({ name, namespace: client.namespace, gracePeriodSeconds: 0 })
          .catch((error: unknown) => {
            if (apiStatus(error) !== 404) throw error;
          });
      } finally {
        watch.release();
        await releaseRunAnchor(client, runId);
      }
    })();
    return removal;
  };
  const live: LiveContainer = { name, remove: () => remove().catch(() => {}) };
  registerContainer(live);
  const box = podBox(client, name);
  const grading: GradingContainer = { name, box, remove };
  try {
    await watch.ready();
    options.hooks?.onCreating();
    const manifest = podManifest(config, { name, runId, instanceId: instance.instance_id, owner });
    options.hooks?.onCreated(grading);
    await createAndStartPod(client, watch, manifest, { timeoutSeconds: config.pull_timeout });
    return grading;
  } catch (error) {
    await remove().catch(() => {});
    throw error;
  }
}
