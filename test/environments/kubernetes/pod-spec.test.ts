import { describe, expect, it } from "vitest";
import { kubernetesEnvironmentSchema } from "../../../src/config/kubernetes.js";
import { exitCodeOf } from "../../../src/environments/kubernetes/exec-channel.js";
import { labelValue, podManifest, podName } from "../../../src/environments/kubernetes/pod-spec.js";

describe("pod spec", () => {
  it("label values: kept when valid, else a readable prefix and a hash", () => {
    expect(labelValue("astropy__astropy-12907")).toBe("astropy__astropy-12907");
    const long = labelValue(`x${"y".repeat(80)}`);
    expect(long.length).toBeLessThanOrEqual(63);
    expect(long).toMatch(/^xyy+-[0-9a-f]{10}$/);
    expect(labelValue("a/b c")).toMatch(/^a-b-c-[0-9a-f]{10}$/);
    expect(labelValue("")).toBe("");
  });

  it("pod names are DNS names that say whose pod it is", () => {
    expect(podName("Django__Django-11099")).toMatch(/^swerun-django-django-11099-[0-9a-f]{8}$/);
  });

  it("the manifest: sleeping container, deadline, owner, labels, no token; pod_template merged, its lists added", () => {
    const config = kubernetesEnvironmentSchema.parse({
      environment_class: "kubernetes",
      image: "img:1",
      container_timeout: "90m",
      resources: { limits: { memory: "2Gi", cpu: 1 } },
      pod_template: {
        metadata: { labels: { team: "a" } },
        spec: {
          nodeSelector: { pool: "x" },
          tolerations: [{ key: "k", operator: "Exists" }],
          runtimeClassName: "gvisor",
        },
      },
    });
    const manifest = podManifest(config, {
      name: "swerun-x-1",
      runId: "run-1",
      instanceId: "i-1",
      owner: { name: "anchor", uid: "u-1" },
    });
    expect(manifest.metadata?.labels).toMatchObject({
      team: "a",
      "swerun.run_id": "run-1",
      "swerun.instance_id": "i-1",
    });
    expect(manifest.metadata?.ownerReferences).toEqual([
      { apiVersion: "v1", kind: "ConfigMap", name: "anchor", uid: "u-1" },
    ]);
    expect(manifest.spec).toMatchObject({
      restartPolicy: "Never",
      automountServiceAccountToken: false,
      activeDeadlineSeconds: 5400,
      nodeSelector: { pool: "x" },
      runtimeClassName: "gvisor",
    });
    expect(manifest.spec?.tolerations?.map((t) => t.key)).toEqual([
      "node.kubernetes.io/not-ready",
      "node.kubernetes.io/unreachable",
      "k",
    ]);
    expect(manifest.spec?.containers[0]).toMatchObject({
      image: "img:1",
      command: ["sleep", "90m"],
      resources: { limits: { memory: "2Gi", cpu: "1" } },
    });
  });

  it("an exec's exit code comes from its Status", () => {
    expect(exitCodeOf({ status: "Success" })).toBe(0);
    expect(
      exitCodeOf({
        status: "Failure",
        reason: "NonZeroExitCode",
        details: { causes: [{ reason: "ExitCode", message: "7" }] },
      }),
    ).toBe(7);
    expect(
      exitCodeOf({ status: "Failure", reason: "InternalError", message: "no such file" }),
    ).toBeUndefined();
    expect(exitCodeOf(undefined)).toBeUndefined();
  });
});
