import { afterAll, beforeAll, expect } from "vitest";
import {
  demoImages,
  importImages,
  onCluster,
  runPods,
  type TestCluster,
  testCluster,
} from "../environments/kubernetes/cluster.js";
import { type CliResult, runCli } from "./cli.js";

/**
 * The set-up of a suite that runs the bundled demo on the test cluster (call inside a `describeKubernetes` body):
 * before all, the cluster with the demo's images imported into its nodes; after all, no swerun pod left.
 * Returns the cluster, set once the set-up has run.
 */
export function demoCluster(): () => TestCluster {
  let cluster: TestCluster | undefined;
  beforeAll(async () => {
    cluster = await testCluster();
    importImages(...(await demoImages()));
  });
  afterAll(async () => {
    if (cluster) expect(await runPods(cluster)).toEqual([]);
  });
  return () => {
    if (!cluster)
      throw new Error("the test cluster is not set up yet (call demoCluster() in a describe body)");
    return cluster;
  };
}

/**
 * `swerun swebench --subset demo -w 3` with `flags`, written to `out`: in Docker, or, given a cluster, in its
 * pods (with the -c `specs`).
 */
export function runDemo(
  out: string,
  flags: string[],
  cluster?: TestCluster,
  ...specs: string[]
): Promise<CliResult> {
  const where = cluster ? onCluster(cluster, ...specs) : ["--environment-class", "docker"];
  return runCli(["swebench", "--subset", "demo", ...flags, "-w", "3", "-o", out, ...where]);
}
