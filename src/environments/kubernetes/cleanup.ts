import os from "node:os";
import type { V1ObjectMeta } from "@kubernetes/client-node";
import { processAlive } from "../../util/process-alive.js";
import { apiMessage, apiStatus, type ClusterSettings, clusterError, kubeClient } from "./client.js";
import { labelValue, POD_ANNOTATIONS, POD_LABELS, runSelector } from "./pod-spec.js";

export interface PodCleanupOptions extends ClusterSettings {
  /** Only the pods (and ConfigMaps) of this run, kept ones included unless `skipKept`. */
  runId?: string | undefined;
  /** Also pods kept on purpose and those of runs still going or started on another machine. */
  all?: boolean | undefined;
  skipKept?: boolean | undefined;
  /** List what would be deleted, delete nothing. */
  dryRun?: boolean | undefined;
  /** Where lines go (stdout by default). */
  print?: (line: string) => void;
}

/** Why an object is left alone, or undefined when it belongs to a run that is over. */
function reasonToKeep(meta: V1ObjectMeta, options: PodCleanupOptions): string | undefined {
  if (options.all) return undefined;
  const labels = meta.labels ?? {};
  if (labels[POD_LABELS.keep] === "true" && (!options.runId || options.skipKept))
    return "kept on purpose (keep_container: true)";
  if (options.runId) return undefined;
  const host = labels[POD_LABELS.host];
  const pid = Number(labels[POD_LABELS.pid]);
  if (host && host !== labelValue(os.hostname())) return `started on another machine (${host})`;
  if (Number.isInteger(pid) && pid > 0 && processAlive(pid)) return `its run is still going (pid ${pid})`;
  return undefined;
}

function age(meta: V1ObjectMeta): string {
  const created = meta.creationTimestamp ? new Date(meta.creationTimestamp).getTime() : Date.now();
  const seconds = Math.max(0, Math.floor((Date.now() - created) / 1000));
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  return `${Math.floor(seconds / 3600)}h${Math.floor((seconds % 3600) / 60)}m`;
}

/**
 * `swerun cleanup --kubernetes`: deletes the pods swerun runs left in the namespace (found by label), listing
 * each one, and the runs' anchor ConfigMaps (the cluster deletes what pods they still own). Kept pods and
 * those of live runs stay unless `all`. Returns the exit code (1 when one could not be deleted).
 */
export async function cleanPods(options: PodCleanupOptions = {}): Promise<number> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const client = kubeClient(options);
  const namespace = client.namespace;
  const labelSelector = options.runId ? runSelector(options.runId) : POD_LABELS.runId;
  let pods: Awaited<ReturnType<typeof client.core.listNamespacedPod>>;
  let anchors: Awaited<ReturnType<typeof client.core.listNamespacedConfigMap>>;
  try {
    pods = await client.core.listNamespacedPod({ namespace, labelSelector });
    anchors = await client.core.listNamespacedConfigMap({ namespace, labelSelector });
  } catch (error) {
    throw clusterError(client, `listing swerun's pods in namespace ${namespace}`, error);
  }
  let deleted = 0;
  let skipped = 0;
  let failed = 0;
  const remove = async (kind: "pod" | "ConfigMap", meta: V1ObjectMeta) => {
    const name = meta.name ?? "";
    const annotations = meta.annotations ?? {};
    const instance = annotations[POD_ANNOTATIONS.instanceId];
    const description = `${kind} ${name}  run ${annotations[POD_ANNOTATIONS.runId] || "-"}${instance ? `  instance ${instance}` : ""}  age ${age(meta)}`;
    const keep = reasonToKeep(meta, options);
    if (keep) {
      skipped++;
      print(`skipped ${description}: ${keep}`);
      return;
    }
    deleted++;
    if (options.dryRun) {
      print(`would delete ${description}`);
      return;
    }
    try {
      if (kind === "pod") await client.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 });
      else await client.core.deleteNamespacedConfigMap({ name, namespace, propagationPolicy: "Background" });
      print(`deleted ${description}`);
    } catch (error) {
      if (apiStatus(error) === 404) {
        print(`deleted ${description} (it was already going away)`);
        return;
      }
      deleted--;
      failed++;
      print(`could not delete ${description}: ${apiMessage(error)}`);
    }
  };
  for (const pod of pods.items) await remove("pod", pod.metadata ?? {});
  for (const anchor of anchors.items) await remove("ConfigMap", anchor.metadata ?? {});
  const verb = options.dryRun ? "would delete" : "deleted";
  const hint = skipped && !options.all ? ` (${skipped} skipped; --all deletes them too)` : "";
  const found = pods.items.length + anchors.items.length;
  print(
    found === 0
      ? `No swerun pods${options.runId ? ` of run ${options.runId}` : ""} found in namespace ${namespace}.`
      : `${deleted} ${verb}, ${failed} failed${hint} (namespace ${namespace}).`,
  );
  return failed ? 1 : 0;
}

/**
 * For a batch starting in a folder an earlier run `runId` wrote: deletes that run's pods and anchors (a kill
 * leaves them running until their activeDeadlineSeconds), kept ones excepted. One line per object deleted
 * or not deletable.
 */
export async function removeLeftoverPods(runId: string, settings: ClusterSettings): Promise<string[]> {
  const lines: string[] = [];
  await cleanPods({
    ...settings,
    runId,
    skipKept: true,
    print: (line) => {
      if (/^(deleted|could not delete) /.test(line)) lines.push(line);
    },
  });
  return lines;
}
