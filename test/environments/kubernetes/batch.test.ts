import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { makeInformer, type V1Pod } from "@kubernetes/client-node";
import { expect, it } from "vitest";
import { killAt, runCli, startCli, waitFor } from "../../helpers/cli.js";
import { writeDataset } from "../../helpers/datasets.js";
import { demoCluster, runDemo } from "../../helpers/kubernetes-demo.js";
import { tempDir } from "../../helpers/tmp.js";
import { clusterPid, describeKubernetes, nodeReady, onCluster, podWithFile, runPods } from "./cluster.js";

await describeKubernetes("swebench batches in pods (test cluster)", () => {
  const theCluster = demoCluster();

  it("the demo batch in pods writes the same preds.json as in Docker", async () => {
    const cluster = theCluster();
    const dir = tempDir();
    const docker = await runDemo(join(dir, "docker"), ["-q"]);
    expect(docker.code).toBe(0);
    const pods = await runDemo(join(dir, "pods"), ["-q"], cluster);
    expect(pods.stderr).toBe("");
    expect(pods.code).toBe(0);
    const read = (name: string) => JSON.parse(readFileSync(join(dir, name, "preds.json"), "utf8"));
    expect(read("pods")).toEqual(read("docker"));
    expect(Object.keys(read("pods"))).toHaveLength(3);
    const run = JSON.parse(readFileSync(join(dir, "pods", "run.json"), "utf8"));
    expect(run.exit_statuses).toEqual({ Submitted: 3 });
    expect(run.agent.environment_class).toBe("kubernetes");
    expect(await runPods(cluster, run.run_id)).toEqual([]);
  });

  /** A batch of `count` scripted instances whose first action is `before`, on the cluster. */
  function startBatch(count: number, before: string, ...specs: string[]) {
    const cluster = theCluster();
    const dir = tempDir();
    const dataset = writeDataset(dir, count, before);
    const out = join(dir, "out");
    const args = [
      "swebench",
      "--subset",
      dataset,
      "-c",
      "swebench",
      "-c",
      "swebench-demo",
      "-q",
      "-w",
      String(count),
      "-o",
      out,
      ...onCluster(cluster, ...specs),
    ];
    return { out, args };
  }

  /** The run id of a batch once its run.json is written. */
  async function runIdOf(out: string, child: ChildProcess): Promise<string> {
    await waitFor(() => existsSync(join(out, "run.json")), 60_000, child);
    return JSON.parse(readFileSync(join(out, "run.json"), "utf8")).run_id;
  }

  it("a pod deleted mid-run re-queues its instance once; the batch ends with every instance submitted", async () => {
    const cluster = theCluster();
    const { out, args } = startBatch(2, "touch /tmp/started; sleep 4");
    const run = startCli(args);
    const runId = await runIdOf(out, run.child);
    const victim = await podWithFile(cluster, runId, "/tmp/started");
    await cluster.client.core.deleteNamespacedPod({
      name: victim.metadata?.name ?? "",
      namespace: cluster.namespace,
    });
    const result = await run.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("exit statuses: Submitted 2");
    const log = readFileSync(join(out, "swerun.log"), "utf8");
    expect(log.match(/lost with its pod/g)).toHaveLength(1);
    expect(log).toMatch(/lost with its pod: Pod \S+ in namespace swerun is lost: the pod was deleted/);
    expect(await runPods(cluster, runId)).toEqual([]);
  });

  it("a node that stops answering (NotReady) re-queues its instance once, onto the other node", async (context) => {
    const cluster = theCluster();
    if (cluster.nodes < 2) context.skip();
    const affinity = {
      spec: {
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              {
                weight: 100,
                preference: {
                  matchExpressions: [
                    { key: "kubernetes.io/hostname", operator: "In", values: ["swerun-node2"] },
                  ],
                },
              },
            ],
          },
        },
      },
    };
    const { out, args } = startBatch(
      1,
      "touch /tmp/started; sleep 4",
      `environment.pod_template=${JSON.stringify(affinity)}`,
    );
    const run = startCli(args);
    const runId = await runIdOf(out, run.child);
    const first = await podWithFile(cluster, runId, "/tmp/started");
    expect(first.spec?.nodeName).toBe("swerun-node2");
    // The node's kubelet stops answering: no heartbeat, no exec traffic, as when a node is lost.
    const kubelet = clusterPid("kubelet2");
    process.kill(kubelet, "SIGSTOP");
    try {
      const result = await run.done;
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain("exit statuses: Submitted 1");
    } finally {
      process.kill(kubelet, "SIGCONT");
    }
    const log = readFileSync(join(out, "swerun.log"), "utf8");
    expect(log.match(/lost with its pod/g)).toHaveLength(1);
    expect(log).toContain("its node stopped answering (node swerun-node2)");
    expect(await runPods(cluster, runId)).toEqual([]);
    await nodeReady(cluster, "swerun-node2");
  });

  it("SIGKILL mid-batch, then the same command: what the killed run left is deleted and each instance runs once", async () => {
    const cluster = theCluster();
    const { out, args } = startBatch(3, "true");
    const killed = await killAt("action-start", args);
    expect(killed.signal).toBe("SIGKILL");
    const runId = JSON.parse(readFileSync(join(out, "run.json"), "utf8")).run_id;
    expect((await runPods(cluster, runId)).length).toBeGreaterThan(0);
    const resumed = await runCli(args);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("exit statuses: Submitted 3");
    const log = readFileSync(join(out, "swerun.log"), "utf8");
    expect(log).toMatch(/Deleted \d+ Kubernetes object\(s\) left by the earlier run/);
    const second = log.slice(log.lastIndexOf(`run ${runId}: 3 to run`));
    for (let i = 1; i <= 3; i++)
      expect(second.match(new RegExp(`test__calc-${i}: start`, "g"))).toHaveLength(1);
    expect(await runPods(cluster, runId)).toEqual([]);
  });

  it("places the pods of a batch on both nodes (spread by the scheduler)", async (context) => {
    const cluster = theCluster();
    if (cluster.nodes < 2) context.skip();
    const spread = `spread-${process.pid}`;
    const template = {
      metadata: { labels: { "swerun.test/spread": spread } },
      spec: {
        topologySpreadConstraints: [
          {
            maxSkew: 1,
            topologyKey: "kubernetes.io/hostname",
            whenUnsatisfiable: "DoNotSchedule",
            labelSelector: { matchLabels: { "swerun.test/spread": spread } },
          },
        ],
      },
    };
    const nodes = new Set<string>();
    const informer = makeInformer<V1Pod>(
      cluster.client.config,
      `/api/v1/namespaces/${cluster.namespace}/pods`,
      () =>
        cluster.client.core.listNamespacedPod({
          namespace: cluster.namespace,
          labelSelector: `swerun.test/spread=${spread}`,
        }),
      `swerun.test/spread=${spread}`,
    );
    const note = (pod: V1Pod) => pod.spec?.nodeName && nodes.add(pod.spec.nodeName);
    informer.on("add", note);
    informer.on("update", note);
    await informer.start();
    try {
      const { args } = startBatch(4, "sleep 2", `environment.pod_template=${JSON.stringify(template)}`);
      const result = await runCli(args);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain("exit statuses: Submitted 4");
    } finally {
      await informer.stop();
    }
    expect([...nodes].sort()).toEqual(["swerun-node1", "swerun-node2"]);
  });
});
