import { beforeAll, expect, it } from "vitest";
import { KubernetesEnvironment } from "../../../src/environments/kubernetes/environment.js";
import { newRunId } from "../../../src/util/ids.js";
import { runCli } from "../../helpers/cli.js";
import { dockerFixture } from "../../helpers/docker.js";
import {
  describeKubernetes,
  importImages,
  kubernetesTestConfig,
  runPods,
  type TestCluster,
  testCluster,
} from "./cluster.js";

await describeKubernetes("swerun cleanup --kubernetes (test cluster)", () => {
  let cluster: TestCluster;
  let image: string;

  beforeAll(async () => {
    cluster = await testCluster();
    image = (await dockerFixture()).images.base;
    importImages(image);
  });

  it("deletes a run's pods and its ConfigMap; pods of a live run are left alone without --run-id", async () => {
    const runId = newRunId();
    // This process is alive: its pod belongs to a run that is still going.
    const environment = await KubernetesEnvironment.create(kubernetesTestConfig(cluster, image), { runId });
    const env = { KUBECONFIG: cluster.kubeconfig };
    const spared = await runCli(["cleanup", "--kubernetes", "--namespace", cluster.namespace], { env });
    expect(spared.code).toBe(0);
    expect(spared.stdout).toMatch(new RegExp(`skipped pod ${environment.podName} .*its run is still going`));
    const listed = await runCli(
      ["cleanup", "--kubernetes", "--namespace", cluster.namespace, "--run-id", runId, "--dry-run"],
      { env },
    );
    expect(listed.stdout).toContain(`would delete pod ${environment.podName}`);
    expect(await runPods(cluster, runId)).toHaveLength(1);
    const cleaned = await runCli(
      ["cleanup", "--kubernetes", "--namespace", cluster.namespace, "--run-id", runId],
      { env },
    );
    expect(cleaned.code).toBe(0);
    expect(cleaned.stdout).toContain(`deleted pod ${environment.podName}`);
    expect(cleaned.stdout).toMatch(/deleted ConfigMap swerun-run-/);
    expect(await runPods(cluster, runId)).toEqual([]);
    await environment.close();
  });
});
