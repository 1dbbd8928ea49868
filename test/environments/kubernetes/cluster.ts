import { execFileSync } from "node:child_process";
import { existsSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { V1Pod } from "@kubernetes/client-node";
import { describe, it } from "vitest";
import { kubernetesEnvironmentSchema } from "../../../src/config/kubernetes.js";
import type { KubernetesEnvironmentConfig } from "../../../src/config/schema.js";
import type { Instance } from "../../../src/datasets/dataset.js";
import { DEFAULT_IMAGE_TEMPLATE, imageName } from "../../../src/datasets/image-name.js";
import { type KubeClient, kubeClient } from "../../../src/environments/kubernetes/client.js";
import { runPodExec } from "../../../src/environments/kubernetes/pod-exec.js";
import { runSelector } from "../../../src/environments/kubernetes/pod-spec.js";
import { ensureFixtureImage } from "../../../src/fixture-images/fixture-image.js";
import { packageRoot } from "../../../src/util/package-root.js";

/**
 * The test cluster `npm run cluster:up` starts (scripts/cluster/up.sh): its state folder holds cluster.env
 * (KUBECONFIG, node count, namespace). The Kubernetes tests run on it, or are skipped with one line when it is
 * not up; with SWERUN_REQUIRE_KUBERNETES=1 (CI) a missing cluster fails them instead.
 */
export const CLUSTER_DIR = process.env.SWERUN_CLUSTER_DIR ?? "/tmp/swerun-cluster";
export const REQUIRE_KUBERNETES = process.env.SWERUN_REQUIRE_KUBERNETES === "1";

export interface TestCluster {
  kubeconfig: string;
  namespace: string;
  nodes: number;
  client: KubeClient;
}

let probe: Promise<{ cluster?: TestCluster; reason: string }> | undefined;

function readClusterEnv(): Record<string, string> {
  const path = join(CLUSTER_DIR, "cluster.env");
  if (!existsSync(path)) return {};
  return Object.fromEntries(
    readFileSync(path, "utf8")
      .split("\n")
      .filter((line) => line.includes("="))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
}

function probeCluster(): Promise<{ cluster?: TestCluster; reason: string }> {
  probe ??= (async () => {
    const env = readClusterEnv();
    const kubeconfig = env.KUBECONFIG;
    if (!kubeconfig)
      return {
        reason: `no test cluster (${join(CLUSTER_DIR, "cluster.env")} missing: run npm run cluster:up)`,
      };
    try {
      const namespace = env.SWERUN_CLUSTER_NAMESPACE ?? "swerun";
      const client = kubeClient({ kubeconfig, namespace });
      await client.core.readNamespace({ name: namespace });
      return {
        cluster: { kubeconfig, namespace, nodes: Number(env.SWERUN_CLUSTER_NODES ?? 1), client },
        reason: "",
      };
    } catch (error) {
      return { reason: `the test cluster does not answer: ${(error as Error).message.split("\n")[0]}` };
    }
  })();
  return probe;
}

function announceSkip(reason: string): void {
  try {
    openSync(join(tmpdir(), `swerun-kubernetes-skip-${process.ppid}`), "wx");
  } catch {
    return;
  }
  process.stderr.write(
    `Kubernetes tests skipped: ${reason}. Set SWERUN_REQUIRE_KUBERNETES=1 to make this a failure.\n`,
  );
}

/** `describe` for tests on the test cluster: skipped with one line when it is not up (a failure with SWERUN_REQUIRE_KUBERNETES=1). */
export async function describeKubernetes(name: string, body: () => void): Promise<void> {
  const { cluster, reason } = await probeCluster();
  if (cluster) {
    describe(name, body);
  } else if (REQUIRE_KUBERNETES) {
    describe(name, () => {
      it("needs the test cluster (SWERUN_REQUIRE_KUBERNETES=1)", () => {
        throw new Error(`SWERUN_REQUIRE_KUBERNETES=1 but ${reason}`);
      });
    });
  } else {
    announceSkip(reason);
    describe.skip(name, body);
  }
}

/** The running test cluster (call inside a `describeKubernetes` body). */
export async function testCluster(): Promise<TestCluster> {
  const { cluster, reason } = await probeCluster();
  if (!cluster) throw new Error(reason);
  return cluster;
}

/** Imports Docker images into every node of the test cluster (scripts/cluster/import-images.sh). */
export function importImages(...images: string[]): void {
  execFileSync(join(packageRoot(), "scripts", "cluster", "import-images.sh"), images, {
    env: { ...process.env, SWERUN_CLUSTER_DIR: CLUSTER_DIR },
    stdio: ["ignore", "ignore", "inherit"],
  });
}

/** Builds (in Docker, offline) the images of the bundled demo's instances; returns their names. */
export async function demoImages(): Promise<string[]> {
  const dir = join(packageRoot(), "config", "swebench-demo");
  const rows = JSON.parse(readFileSync(join(dir, "instances.json"), "utf8")) as Instance[];
  const names: string[] = [];
  for (const row of rows) {
    const image = imageName(row, DEFAULT_IMAGE_TEMPLATE);
    await ensureFixtureImage(image, row, dir);
    names.push(image);
  }
  return names;
}

/**
 * Pods of the tests that do not test placement stay on node1: the node-loss test freezes node2's kubelet,
 * and test files run in parallel.
 */
export const ON_NODE1 = { spec: { nodeSelector: { "kubernetes.io/hostname": "swerun-node1" } } };

/** A validated kubernetes environment config on the test cluster for `image` (on node1), then `extra`. */
export function kubernetesTestConfig(
  cluster: TestCluster,
  image: string,
  extra: Record<string, unknown> = {},
): KubernetesEnvironmentConfig {
  return kubernetesEnvironmentSchema.parse({
    environment_class: "kubernetes",
    image,
    kubeconfig: cluster.kubeconfig,
    namespace: cluster.namespace,
    image_pull_policy: "Never",
    pull_timeout: 60,
    pod_template: ON_NODE1,
    ...extra,
  });
}

/** The flags that run a batch's pods on the test cluster, with images the nodes already have; `more`: -c specs. */
export function onCluster(cluster: TestCluster, ...more: string[]): string[] {
  return [
    "--environment-class",
    "kubernetes",
    "-c",
    `environment.kubeconfig=${cluster.kubeconfig}`,
    "-c",
    `environment.namespace=${cluster.namespace}`,
    "-c",
    "environment.image_pull_policy=Never",
    ...more.flatMap((spec) => ["-c", spec]),
  ];
}

/** The pods of a run (all of the namespace's swerun pods without `runId`), as the API server has them. */
export async function runPods(cluster: TestCluster, runId?: string): Promise<V1Pod[]> {
  const list = await cluster.client.core.listNamespacedPod({
    namespace: cluster.namespace,
    labelSelector: runId ? runSelector(runId) : "swerun.run_id",
  });
  return list.items;
}

/**
 * The name of a running pod of run `runId` whose container has `path` (its instance's first action made it),
 * asked through execs of its own; waits for one.
 */
export async function podWithFile(cluster: TestCluster, runId: string, path: string): Promise<V1Pod> {
  for (;;) {
    for (const pod of await runPods(cluster, runId)) {
      if (pod.status?.phase !== "Running" || pod.metadata?.deletionTimestamp) continue;
      const name = pod.metadata?.name ?? "";
      const found = await runPodExec(cluster.client, name, ["/bin/sh", "-c"], {
        command: `test -e ${path}`,
        env: [],
        workdir: "/",
        timeoutSeconds: 20,
        maxOutputBytes: 1000,
      }).catch(() => undefined);
      if (found?.returncode === 0) return pod;
    }
  }
}

/** Resolves once `node` is Ready again (after a test froze its kubelet). */
export async function nodeReady(cluster: TestCluster, node: string): Promise<void> {
  for (;;) {
    const read = await cluster.client.core.readNode({ name: node });
    if (read.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) return;
    await new Promise((resolve) => setTimeout(resolve, 200)); // the poll's interval, as waitFor's
  }
}

/** The pid of a daemon of the test cluster (scripts/cluster/up.sh's pid files), e.g. "kubelet2". */
export function clusterPid(name: string): number {
  return Number(readFileSync(join(CLUSTER_DIR, "pids", `${name}.pid`), "utf8").trim());
}
