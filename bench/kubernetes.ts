/**
 * Kubernetes against Docker on the same machine, in one run (the cluster of `npm run cluster:up`, the Docker
 * daemon of DOCKER_HOST), with the same offline-built image and the same commands:
 *   - per action: the median time of an action through a pod's session (one long-lived pods/exec through
 *     the API server and the kubelet) against the Docker session (the container's PID 1 attached);
 *   - start: the median time from nothing to a ready environment: a pod (created, scheduled, started, its
 *     session open; the run's anchor and watch already there, as for every instance of a batch but the
 *     first, whose start is shown too) against a container (created, started, its session open), and both
 *     torn down;
 *   - a batch of scripted instances at a number of workers, in pods against in Docker (wall time).
 * Goal (issue 31): each within 1.5x of Docker's.
 * Usage: node dist/bench/kubernetes.js [actions, default 40] [instances, default 20] [workers, default 4]
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runBatch } from "../src/batch/batch.js";
import type { BatchDisplay } from "../src/batch/display.js";
import { dockerEnvironmentSchema } from "../src/config/docker.js";
import { kubernetesEnvironmentSchema } from "../src/config/kubernetes.js";
import { loadConfig } from "../src/config/load.js";
import { type Instance, readDatasetFile } from "../src/datasets/dataset.js";
import { DockerEnvironment } from "../src/environments/docker/environment.js";
import type { Environment } from "../src/environments/environment.js";
import { KubernetesEnvironment } from "../src/environments/kubernetes/environment.js";
import { ensureFixtureImage } from "../src/fixture-images/fixture-image.js";
import { instancePreparer } from "../src/fixture-images/instance-preparer.js";
import { packageRoot } from "../src/util/package-root.js";
import { median } from "./docker-floor.js";
import { BENCH_IMAGE, scriptedCalcDataset } from "./scripted-dataset.js";

const ACTIONS = Number(process.argv[2] ?? 40);
const INSTANCES = Number(process.argv[3] ?? 20);
const WORKERS = Number(process.argv[4] ?? 4);
const STARTS = 5;
const BATCH_STEPS = 10;
const COMMAND = "cat /etc/passwd; echo done";
const CLUSTER_DIR = process.env.SWERUN_CLUSTER_DIR ?? "/tmp/swerun-cluster";

/** The test cluster's kubeconfig and namespace (scripts/cluster/up.sh's cluster.env). */
function cluster(): { kubeconfig: string; namespace: string } {
  const path = join(CLUSTER_DIR, "cluster.env");
  if (!existsSync(path)) throw new Error(`no cluster: ${path} is missing (run npm run cluster:up)`);
  const env = Object.fromEntries(
    readFileSync(path, "utf8")
      .split("\n")
      .filter((line) => line.includes("="))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
  return { kubeconfig: env.KUBECONFIG ?? "", namespace: env.SWERUN_CLUSTER_NAMESPACE ?? "swerun" };
}

const { kubeconfig, namespace } = cluster();
const KUBE = { kubeconfig, namespace, image_pull_policy: "Never" };

function podConfig() {
  return kubernetesEnvironmentSchema.parse({ environment_class: "kubernetes", image: BENCH_IMAGE, ...KUBE });
}

function containerConfig() {
  return dockerEnvironmentSchema.parse({
    environment_class: "docker",
    image: BENCH_IMAGE,
    run_args: ["--rm", "--network", "none"],
  });
}

/** Times `ACTIONS` actions in `env` (after 5 to warm up). */
async function actionTimes(env: Environment): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < ACTIONS + 5; i++) {
    const start = performance.now();
    const output = await env.execute({ command: COMMAND });
    if (output.returncode !== 0) throw new Error(`bench action failed: ${output.output}`);
    if (i >= 5) times.push(performance.now() - start);
  }
  return times;
}

/** Times `STARTS` starts (to a ready environment) and teardowns of `create`'s environments. */
async function startTimes(create: () => Promise<Environment>): Promise<{ start: number[]; close: number[] }> {
  const start: number[] = [];
  const close: number[] = [];
  for (let i = 0; i < STARTS; i++) {
    const begin = performance.now();
    const env = await create();
    start.push(performance.now() - begin);
    const end = performance.now();
    await env.close();
    close.push(performance.now() - end);
  }
  return { start, close };
}

const quiet: BatchDisplay = {
  start: () => {},
  instanceStart: () => {},
  event: () => {},
  instanceEnd: () => {},
  message: () => {},
  stop: () => {},
};

/** The wall time (s) of the batch of `path` with `specs` over swerun's swebench config. */
async function batchSeconds(dir: string, path: string, label: string, specs: string[]): Promise<number> {
  const instances = (await readDatasetFile(path)) as Instance[];
  const config = loadConfig(["swebench", "swebench-demo", "agent.step_limit=0", ...specs]);
  const start = performance.now();
  const summary = await runBatch({
    instances,
    config,
    outputDir: join(dir, `out-${label}`),
    workers: WORKERS,
    redoExisting: true,
    runId: `bench-${label}-${process.pid}`,
    subset: path,
    split: "test",
    display: quiet,
    prepare: instancePreparer({}, dir),
  });
  const wall = (performance.now() - start) / 1000;
  const submitted = summary.statuses.get("Submitted")?.length ?? 0;
  if (submitted !== instances.length)
    throw new Error(
      `${label}: ${submitted} of ${instances.length} submitted (${[...summary.statuses.keys()]})`,
    );
  return wall;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "swerun-bench-kubernetes-"));
  const rows: string[] = [];
  try {
    const path = scriptedCalcDataset(dir, INSTANCES, BATCH_STEPS, COMMAND);
    const instances = (await readDatasetFile(path)) as Instance[];
    await ensureFixtureImage(BENCH_IMAGE, instances[0] as Instance, dir);
    execFileSync(join(packageRoot(), "scripts", "cluster", "import-images.sh"), [BENCH_IMAGE], {
      stdio: "inherit",
    });
    const context = { runId: `bench-${process.pid}` };
    const pod = await KubernetesEnvironment.create(podConfig(), context);
    const container = await DockerEnvironment.create(containerConfig(), context);
    let podActions: number[];
    let containerActions: number[];
    try {
      podActions = await actionTimes(pod);
      containerActions = await actionTimes(container);
    } finally {
      await pod.close();
      await container.close();
    }
    // The first pod of a run also makes the run's anchor and watch (as the first instance of a batch does).
    const coldBegin = performance.now();
    const keeper = await KubernetesEnvironment.create(podConfig(), context);
    const cold = performance.now() - coldBegin;
    let podStarts: { start: number[]; close: number[] };
    try {
      podStarts = await startTimes(() => KubernetesEnvironment.create(podConfig(), context));
    } finally {
      await keeper.close();
    }
    const containerStarts = await startTimes(() => DockerEnvironment.create(containerConfig(), context));
    const inPods = await batchSeconds(dir, path, "pods", [
      "environment.environment_class=kubernetes",
      `environment.kubeconfig=${kubeconfig}`,
      `environment.namespace=${namespace}`,
      "environment.image_pull_policy=Never",
    ]);
    const inDocker = await batchSeconds(dir, path, "docker", [
      'environment.run_args=["--rm","--network","none"]',
    ]);
    const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
    const [pa, ca] = [median(podActions), median(containerActions)];
    const [ps, cs] = [median(podStarts.start), median(containerStarts.start)];
    const [pc, cc] = [median(podStarts.close), median(containerStarts.close)];
    rows.push(
      `Kubernetes (pods through the API server) against Docker, image ${BENCH_IMAGE}, \`${COMMAND}\`:`,
      "",
      "| measure | Kubernetes | Docker | Kubernetes / Docker (goal ≤ 1.5x) |",
      "| :--- | ---: | ---: | ---: |",
      `| per action, session (median of ${ACTIONS}, ms) | ${pa.toFixed(1)} | ${ca.toFixed(1)} | ${ratio(pa, ca)} |`,
      `| start to a ready environment (median of ${STARTS}, ms) | ${ps.toFixed(0)} | ${cs.toFixed(0)} | ${ratio(ps, cs)} |`,
      `| start of a run's first pod (its anchor and watch made too, ms) | ${cold.toFixed(0)} | | |`,
      `| teardown (median of ${STARTS}, ms) | ${pc.toFixed(0)} | ${cc.toFixed(0)} | ${ratio(pc, cc)} |`,
      `| batch: ${INSTANCES} instances x ${BATCH_STEPS} steps at ${WORKERS} workers (s) | ${inPods.toFixed(1)} | ${inDocker.toFixed(1)} | ${ratio(inPods, inDocker)} |`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(`${rows.join("\n")}\n`);
}

await main();
