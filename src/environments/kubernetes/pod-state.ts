import type { V1Pod } from "@kubernetes/client-node";

/**
 * What a pod's status says, as pure functions of the Pod object: where it is on its way to running (for
 * the progress display and the start's deadline), and whether a running pod was lost (deleted, evicted,
 * preempted, its node gone), which makes its instance run again elsewhere.
 */

/** A pod on its way to running: not placed yet, placed (image pulling, container being created), running. */
export type PodPhase = "pending" | "pulling" | "running";

export type StartupState =
  | { state: PodPhase; reason: string }
  /** It cannot start: the run ends with `reason`, at once or, for reasons that may clear, at the deadline. */
  | { state: "failed"; reason: string };

/** Waiting reasons of a container that mean it will never start as asked: no point waiting for the deadline. */
const FATAL_WAITING = new Set([
  "InvalidImageName",
  "ErrImageNeverPull",
  "CreateContainerConfigError",
  "CreateContainerError",
  "RunContainerError",
]);

function condition(pod: V1Pod, type: string) {
  return pod.status?.conditions?.find((entry) => entry.type === type);
}

/** The pod's (first) container's state. */
function containerState(pod: V1Pod) {
  return pod.status?.containerStatuses?.[0]?.state;
}

/** "Reason: message", without the parts that are missing. */
function said(reason: string | undefined, message: string | undefined): string {
  return [reason, message].filter(Boolean).join(": ");
}

/** Why a pod ended or will not start, from its phase and its container's termination. */
function endedReason(pod: V1Pod): string {
  const terminated = containerState(pod)?.terminated;
  const container = terminated
    ? `its container ended (${said(terminated.reason, terminated.message) || "exit code"} ${terminated.exitCode})`
    : "";
  return (
    said(pod.status?.reason, pod.status?.message) || container || `the pod is ${pod.status?.phase ?? "gone"}`
  );
}

/** Where a pod being started is, or why it will not run. */
export function startupState(pod: V1Pod): StartupState {
  const phase = pod.status?.phase;
  if (pod.metadata?.deletionTimestamp)
    return { state: "failed", reason: "the pod was deleted while it started" };
  if (phase === "Failed" || phase === "Succeeded") return { state: "failed", reason: endedReason(pod) };
  const state = containerState(pod);
  if (phase === "Running" && state?.running && condition(pod, "Ready")?.status === "True")
    return { state: "running", reason: "" };
  const scheduled = condition(pod, "PodScheduled");
  if (scheduled?.status !== "True") {
    const why = scheduled?.reason ? said(scheduled.reason, scheduled.message) : "waiting to be scheduled";
    return { state: "pending", reason: why };
  }
  const waiting = state?.waiting;
  if (waiting?.reason && FATAL_WAITING.has(waiting.reason))
    return { state: "failed", reason: said(waiting.reason, waiting.message) };
  if (state?.terminated) return { state: "failed", reason: endedReason(pod) };
  const node = pod.spec?.nodeName ? ` on node ${pod.spec.nodeName}` : "";
  return {
    state: "pulling",
    reason: `${waiting?.reason ? said(waiting.reason, waiting.message) : "starting"}${node}`,
  };
}

/**
 * Why a pod that ran is lost, or undefined while it is fine: deleted (by a user, a taint eviction after its
 * node was lost, a preemption), failed (evicted, its container gone), marked for disruption, or not ready
 * while its container runs (the node controller marks so the pods of a node that stopped answering). A pod
 * past its lifetime (container_timeout) is not lost: it ended as configured, and its run ends with it.
 */
export function lostReason(pod: V1Pod | undefined): string | undefined {
  if (!pod) return "the pod was deleted";
  const node = pod.spec?.nodeName ? ` (node ${pod.spec.nodeName})` : "";
  if (pod.metadata?.deletionTimestamp) return `the pod was deleted${node}`;
  const phase = pod.status?.phase;
  // Its lifetime is over (container_timeout: the deadline, or its `sleep` ended): it ended as configured.
  if (phase === "Succeeded" || pod.status?.reason === "DeadlineExceeded") return undefined;
  if (phase === "Failed") return `${endedReason(pod)}${node}`;
  const disruption = condition(pod, "DisruptionTarget");
  if (disruption?.status === "True")
    return `the cluster is removing the pod${node}: ${said(disruption.reason, disruption.message)}`;
  // The node controller turns Ready to False keeping its reason (none, as the kubelet sets Ready True); the
  // kubelet's own False, for a pod it stops, says why (ContainersNotReady, PodFailed, PodCompleted).
  const ready = condition(pod, "Ready");
  if (phase === "Running" && containerState(pod)?.running && ready?.status === "False" && !ready.reason)
    return `its node stopped answering${node}: the pod is no longer ready`;
  return undefined;
}
