import type { V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { lostReason, startupState } from "../../../src/environments/kubernetes/pod-state.js";

/** A pod as the API server reports it, from the parts a test sets. */
function pod(status: V1Pod["status"], extra: Partial<V1Pod> = {}): V1Pod {
  return { metadata: { name: "p" }, spec: { containers: [], nodeName: "n1" }, status, ...extra };
}

const running = pod({
  phase: "Running",
  conditions: [
    { type: "PodScheduled", status: "True" },
    { type: "Ready", status: "True" },
  ],
  containerStatuses: [
    { name: "main", image: "i", imageID: "", ready: true, restartCount: 0, state: { running: {} } },
  ],
});

describe("startupState", () => {
  it("pending until scheduled, with the scheduler's reason", () => {
    expect(startupState(pod({ phase: "Pending" }))).toEqual({
      state: "pending",
      reason: "waiting to be scheduled",
    });
    const unschedulable = pod({
      phase: "Pending",
      conditions: [
        {
          type: "PodScheduled",
          status: "False",
          reason: "Unschedulable",
          message: "0/2 nodes are available",
        },
      ],
    });
    expect(startupState(unschedulable)).toEqual({
      state: "pending",
      reason: "Unschedulable: 0/2 nodes are available",
    });
  });

  it("pulling once placed; a pull error waits for the deadline, an invalid name fails at once", () => {
    const waiting = (reason: string) =>
      pod({
        phase: "Pending",
        conditions: [{ type: "PodScheduled", status: "True" }],
        containerStatuses: [
          {
            name: "main",
            image: "i",
            imageID: "",
            ready: false,
            restartCount: 0,
            state: { waiting: { reason, message: "m" } },
          },
        ],
      });
    expect(startupState(waiting("ImagePullBackOff"))).toEqual({
      state: "pulling",
      reason: "ImagePullBackOff: m on node n1",
    });
    expect(startupState(waiting("InvalidImageName"))).toEqual({
      state: "failed",
      reason: "InvalidImageName: m",
    });
    expect(startupState(waiting("ErrImageNeverPull")).state).toBe("failed");
  });

  it("running once its container runs and it is ready; failed when the pod ended", () => {
    expect(startupState(running)).toEqual({ state: "running", reason: "" });
    expect(startupState(pod({ phase: "Failed", reason: "DeadlineExceeded", message: "too long" }))).toEqual({
      state: "failed",
      reason: "DeadlineExceeded: too long",
    });
  });
});

describe("lostReason", () => {
  it("a running, ready pod is not lost; nor is one past its lifetime (container_timeout)", () => {
    expect(lostReason(running)).toBeUndefined();
    expect(lostReason(pod({ phase: "Failed", reason: "DeadlineExceeded" }))).toBeUndefined();
    expect(lostReason(pod({ phase: "Succeeded" }))).toBeUndefined();
    // The kubelet stopping its containers (the deadline passed) is not the node going away.
    const stopping = {
      ...running,
      status: {
        ...running.status,
        conditions: [{ type: "Ready", status: "False", reason: "ContainersNotReady" }],
      },
    };
    expect(lostReason(stopping)).toBeUndefined();
  });

  it("deleted, deleting, evicted, disrupted, or its node not answering: lost, saying why", () => {
    expect(lostReason(undefined)).toBe("the pod was deleted");
    expect(lostReason({ ...running, metadata: { deletionTimestamp: new Date() } })).toBe(
      "the pod was deleted (node n1)",
    );
    expect(lostReason(pod({ phase: "Failed", reason: "Evicted", message: "low on memory" }))).toBe(
      "Evicted: low on memory (node n1)",
    );
    const disrupted = {
      ...running,
      status: {
        ...running.status,
        conditions: [{ type: "DisruptionTarget", status: "True", reason: "PreemptionByScheduler" }],
      },
    };
    expect(lostReason(disrupted)).toBe("the cluster is removing the pod (node n1): PreemptionByScheduler");
    const notReady = {
      ...running,
      status: { ...running.status, conditions: [{ type: "Ready", status: "False" }] },
    };
    expect(lostReason(notReady)).toBe("its node stopped answering (node n1): the pod is no longer ready");
  });
});
