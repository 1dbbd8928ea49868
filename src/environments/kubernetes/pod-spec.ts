import { createHash, randomBytes } from "node:crypto";
import os from "node:os";
import type { V1Pod, V1Toleration } from "@kubernetes/client-node";
import { durationSeconds } from "../../config/docker.js";
import type { KubernetesEnvironmentConfig } from "../../config/schema.js";

/** Labels on swerun's pods and run objects (the same keys as its Docker containers'); cleanup finds them by these. */
export const POD_LABELS = {
  runId: "swerun.run_id",
  instanceId: "swerun.instance_id",
  /** The process and machine that created the pod. */
  pid: "swerun.pid",
  host: "swerun.host",
  keep: "swerun.keep",
} as const;

/** The annotations holding the full run and instance ids (a label value is cut at 63 characters). */
export const POD_ANNOTATIONS = { runId: "swerun.run_id", instanceId: "swerun.instance_id" } as const;

/** The name of the pod's one container. */
export const CONTAINER_NAME = "main";

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/**
 * `text` as a label value: itself when it is one (at most 63 characters of letters, digits, `-_.`, starting
 * and ending with a letter or digit), else a readable prefix and a hash of the whole.
 */
export function labelValue(text: string): string {
  if (text.length <= 63 && LABEL_VALUE.test(text)) return text;
  const hash = createHash("sha256").update(text).digest("hex").slice(0, 10);
  const prefix = text
    .replace(/[^A-Za-z0-9_.-]+/g, "-")
    .slice(0, 50)
    .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
  return prefix ? `${prefix}-${hash}` : hash;
}

/** The label selector of a run's objects. */
export function runSelector(runId: string): string {
  return `${POD_LABELS.runId}=${labelValue(runId)}`;
}

/** A DNS-1123 name part: lowercase letters, digits and `-`, at most `max` characters. */
function nameSlug(text: string, max: number): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .slice(0, max)
    .replace(/^-+|-+$/g, "");
}

/** `swerun-<instance or run>-<random>`: unique, and telling whose pod it is. */
export function podName(instanceOrRun: string): string {
  const slug = nameSlug(instanceOrRun, 40);
  return `swerun-${slug ? `${slug}-` : ""}${randomBytes(4).toString("hex")}`;
}

/** The name of a run's anchor ConfigMap (one per process that runs pods of the run). */
export function anchorName(runId: string): string {
  const slug = nameSlug(runId, 40);
  return `swerun-run-${slug ? `${slug}-` : ""}${randomBytes(4).toString("hex")}`;
}

/** The labels of everything swerun creates for a run: the run, this process and machine. */
export function runLabels(runId: string): Record<string, string> {
  return {
    [POD_LABELS.runId]: labelValue(runId),
    [POD_LABELS.pid]: String(process.pid),
    [POD_LABELS.host]: labelValue(os.hostname()),
  };
}

/** The tolerations of a lost node: the pod is evicted `seconds` after its node stops answering. */
function nodeLossTolerations(seconds: number): V1Toleration[] {
  return ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"].map((key) => ({
    key,
    operator: "Exists",
    effect: "NoExecute",
    tolerationSeconds: seconds,
  }));
}

export interface PodSpecContext {
  name: string;
  runId: string;
  instanceId?: string | undefined;
  /** The run's anchor: deleting it makes the cluster delete the pod. */
  owner: { name: string; uid: string };
}

/**
 * The pod of one run: its container sleeps out `container_timeout` (the actions run through exec), the pod
 * is bounded by activeDeadlineSeconds, owned by the run's anchor, labelled with the run and instance, with
 * no service-account token and no service links; `pod_template` merged in (its lists added to swerun's).
 */
export function podManifest(config: KubernetesEnvironmentConfig, context: PodSpecContext): V1Pod {
  const template = config.pod_template;
  const spec = { ...(template.spec ?? {}) } as Record<string, unknown>;
  const tolerations = Array.isArray(spec.tolerations) ? (spec.tolerations as V1Toleration[]) : [];
  delete spec.tolerations;
  const resources = config.resources;
  const instanceId = context.instanceId ?? "";
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: context.name,
      labels: {
        ...template.metadata?.labels,
        ...runLabels(context.runId),
        [POD_LABELS.instanceId]: labelValue(instanceId),
        [POD_LABELS.keep]: String(config.keep_container),
      },
      annotations: {
        ...template.metadata?.annotations,
        [POD_ANNOTATIONS.runId]: context.runId,
        [POD_ANNOTATIONS.instanceId]: instanceId,
      },
      ownerReferences: [
        { apiVersion: "v1", kind: "ConfigMap", name: context.owner.name, uid: context.owner.uid },
      ],
    },
    spec: {
      terminationGracePeriodSeconds: 1,
      ...spec,
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      activeDeadlineSeconds: durationSeconds(config.container_timeout),
      tolerations: [...nodeLossTolerations(config.node_loss_toleration_seconds), ...tolerations],
      containers: [
        {
          name: CONTAINER_NAME,
          image: config.image,
          imagePullPolicy: config.image_pull_policy,
          command: ["sleep", config.container_timeout],
          ...(resources.requests || resources.limits ? { resources } : {}),
        },
      ],
    },
  };
}
