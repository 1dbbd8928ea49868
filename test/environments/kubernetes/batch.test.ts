import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runCli } from "../../helpers/cli.js";
import { tempDir } from "../../helpers/tmp.js";
import {
  demoImages,
  describeKubernetes,
  importImages,
  runPods,
  type TestCluster,
  testCluster,
} from "./cluster.js";

/** `-c` specs that run a batch's pods on the test cluster, with images the nodes already have. */
function onCluster(cluster: TestCluster, ...more: string[]): string[] {
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

await describeKubernetes("swebench batches in pods (test cluster)", () => {
  let cluster: TestCluster;

  beforeAll(async () => {
    cluster = await testCluster();
    importImages(...(await demoImages()));
  });

  afterAll(async () => {
    expect(await runPods(cluster)).toEqual([]);
  });

  it("the demo batch in pods writes the same preds.json as in Docker", async () => {
    const dir = tempDir();
    const docker = await runCli([
      "swebench",
      "--subset",
      "demo",
      "--environment-class",
      "docker",
      "-w",
      "3",
      "-q",
      "-o",
      join(dir, "docker"),
    ]);
    expect(docker.code).toBe(0);
    const pods = await runCli([
      "swebench",
      "--subset",
      "demo",
      "-w",
      "3",
      "-q",
      "-o",
      join(dir, "pods"),
      ...onCluster(cluster),
    ]);
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
});
