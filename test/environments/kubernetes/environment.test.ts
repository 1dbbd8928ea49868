import { afterAll, beforeAll, expect, it } from "vitest";
import { KubernetesEnvironment, PodLostError } from "../../../src/environments/kubernetes/environment.js";
import { runPodExec } from "../../../src/environments/kubernetes/pod-exec.js";
import { POD_LABELS } from "../../../src/environments/kubernetes/pod-spec.js";
import { newRunId } from "../../../src/util/ids.js";
import { dockerFixture } from "../../helpers/docker.js";
import type { TestImages } from "../../helpers/docker-images.js";
import {
  describeKubernetes,
  importImages,
  kubernetesTestConfig,
  runPods,
  type TestCluster,
  testCluster,
} from "./cluster.js";

await describeKubernetes("kubernetes environment (test cluster)", () => {
  let cluster: TestCluster;
  let images: TestImages;
  const runId = newRunId();
  const open: KubernetesEnvironment[] = [];

  beforeAll(async () => {
    cluster = await testCluster();
    images = (await dockerFixture()).images;
    importImages(images.base, images.swebench);
  });

  afterAll(async () => {
    await Promise.all(open.map((environment) => environment.close()));
    expect(await runPods(cluster, runId)).toEqual([]);
  });

  /** Runs `command` in the pod through an exec of its own (not the environment's session). */
  function podExec(environment: KubernetesEnvironment, command: string) {
    return runPodExec(cluster.client, environment.podName, ["/bin/sh", "-c"], {
      command,
      env: [],
      workdir: "/",
      timeoutSeconds: 30,
      maxOutputBytes: 10_000,
    });
  }

  /** Resolves once `path` exists in the pod (asked through execs of its own). */
  async function waitForFile(environment: KubernetesEnvironment, path: string): Promise<void> {
    while ((await podExec(environment, `test -e ${path}`)).returncode !== 0) {}
  }

  /** The names of the run's pods now. */
  async function podNames(): Promise<string[]> {
    return (await runPods(cluster, runId)).map((pod) => pod.metadata?.name ?? "");
  }

  /** Expects that a start fails with `message`, leaving no pod of its own. */
  async function startFails(message: RegExp, extra: Record<string, unknown>, image?: string): Promise<void> {
    const before = await podNames();
    await expect(start(extra, image)).rejects.toThrow(message);
    for (const name of await podNames()) expect(before).toContain(name);
  }

  async function start(extra: Record<string, unknown> = {}, image?: string): Promise<KubernetesEnvironment> {
    const environment = await KubernetesEnvironment.create(
      kubernetesTestConfig(cluster, image ?? images.swebench, extra),
      { runId, instanceId: "test__calc-1", onProgress: () => {} },
    );
    open.push(environment);
    return environment;
  }

  for (const execMode of ["session", "exec"] as const) {
    it(`runs commands in a pod (exec_mode ${execMode}): output, exit code, cwd, env, forward_env`, async () => {
      process.env.SWERUN_TEST_FORWARDED = "from-host";
      const environment = await start({
        exec_mode: execMode,
        cwd: "/testbed",
        env: { GREETING: "hi $USER_NAME_UNSET" },
        forward_env: ["SWERUN_TEST_FORWARDED"],
      });
      const first = await environment.execute({
        command: "pwd; echo $GREETING; echo $SWERUN_TEST_FORWARDED; echo err >&2; exit 3",
      });
      expect(first).toMatchObject({ returncode: 3, exception_info: "" });
      expect(first.output).toBe("/testbed\nhi $USER_NAME_UNSET\n[REDACTED]\nerr\n");
      const again = await environment.execute({ command: "cat calc.sh | head -1" }, { cwd: "/" });
      expect(again.output).toContain("No such file");
      const vars = environment.templateVars();
      expect(vars.system).toBe("Linux");
      expect(vars.machine).toBeTruthy();
      expect(environment.serialize().environment_type).toBe(
        "swerun.environments.kubernetes.KubernetesEnvironment",
      );
      await environment.close();
      expect(await runPods(cluster, runId)).toEqual([]);
    });
  }

  it("labels the pod with run and instance, owns it by the run's ConfigMap, bounds it in time, mounts no token", async () => {
    const environment = await start({ container_timeout: "10m" });
    const [pod] = await runPods(cluster, runId);
    expect(pod?.metadata?.labels?.[POD_LABELS.instanceId]).toBe("test__calc-1");
    expect(pod?.metadata?.ownerReferences?.[0]).toMatchObject({ kind: "ConfigMap" });
    expect(pod?.spec?.activeDeadlineSeconds).toBe(600);
    expect(pod?.spec?.automountServiceAccountToken).toBe(false);
    expect(pod?.spec?.containers[0]?.command).toEqual(["sleep", "10m"]);
    // Deleting the run's anchor makes the garbage collector delete the pod.
    const owner = pod?.metadata?.ownerReferences?.[0]?.name ?? "";
    const gone = new Promise<void>((resolve) => {
      const poll = setInterval(async () => {
        if ((await runPods(cluster, runId)).length === 0) {
          clearInterval(poll);
          resolve();
        }
      }, 200);
    });
    await cluster.client.core.deleteNamespacedConfigMap({ name: owner, namespace: cluster.namespace });
    await gone;
    await expect(environment.execute({ command: "true" })).rejects.toThrow(PodLostError);
  });

  it("kills a timed-out command's processes (setsid and background ones too) and returns its partial output", async () => {
    const environment = await start();
    const output = await environment.execute(
      { command: "echo started; (setsid sleep 300 &); sleep 301 & sleep 302" },
      { timeout: 2 },
    );
    expect(output.returncode).toBe(-1);
    expect(output.output).toBe("started\n");
    expect(output.extra).toMatchObject({ exception_type: "TimeoutError" });
    const left = await environment.execute({ command: "ps -eo args | grep -c '^sleep 30[012]' || true" });
    expect(left.output.trim()).toBe("0");
  });

  it("caps the output as Docker does (the middle cut out)", async () => {
    const environment = await start({ max_output_bytes: 1000 });
    const output = await environment.execute({ command: "head -c 5000 /dev/zero | tr '\\0' x" });
    expect(output.extra).toMatchObject({ truncated: { total_bytes: 5000, elided_bytes: 4000 } });
  });

  it("connects again when the session's connection drops mid-action, runs the action once, and loses no output", async () => {
    const environment = await start();
    const running = environment.execute({
      command: "echo one >> /tmp/runs; while [ ! -e /tmp/go ]; do sleep 0.1; done; echo done; cat /tmp/runs",
    });
    await waitForFile(environment, "/tmp/runs");
    // A second exec kills the session's shell loop, as the runtime does when the exec's connection drops: the
    // exec's own process (its parent is outside the pod), not the loop's subshells. The action runs on.
    const killed = await podExec(
      environment,
      `for p in /proc/[0-9]*; do
        { tr '\\0' ' ' < $p/cmdline; } 2>/dev/null | grep -q '^/bin/sh -c IFS= read' || continue
        [ "$(cut -d' ' -f4 $p/stat 2>/dev/null)" = 0 ] && kill -9 "$(basename $p)" && echo killed
      done; touch /tmp/go`,
    );
    expect(killed.output).toBe("killed\n");
    const output = await running;
    expect(output).toMatchObject({ returncode: 0, output: "done\none\n" });
    expect(environment.sessionReconnects).toBe(1);
    const next = await environment.execute({ command: "echo next" });
    expect(next.output).toBe("next\n");
  });

  it("a deleted pod makes the next action (and the running one) throw PodLostError", async () => {
    const environment = await start();
    // Its failure is taken at once: it may come before the delete call returns.
    const running = environment.execute({ command: "touch /tmp/started; sleep 30" }).then(
      () => undefined,
      (error: unknown) => error,
    );
    await waitForFile(environment, "/tmp/started");
    await cluster.client.core.deleteNamespacedPod({
      name: environment.podName,
      namespace: cluster.namespace,
    });
    expect(await running).toBeInstanceOf(PodLostError);
    await expect(environment.execute({ command: "true" })).rejects.toThrow(/is lost: the pod was deleted/);
  });

  it("a pod past its container_timeout ends the run with PodEndedError (not lost: not run again)", async () => {
    const environment = await start({ container_timeout: 4 });
    await expect(environment.execute({ command: "sleep 60" })).rejects.toThrow(
      /has ended: its container_timeout \(4\) passed/,
    );
  });

  it("an image no node has (pull policy Never) fails at once with the kubelet's reason; the pod is deleted", async () => {
    await startFails(/cannot run: ErrImageNeverPull/, {}, "swerun-test/absent:1");
  });

  it("a pod that cannot be scheduled ends after pull_timeout, saying why", async () => {
    await startFails(/was not scheduled within pull_timeout \(3 s\): Unschedulable/, {
      pull_timeout: 3,
      pod_template: { spec: { nodeSelector: { "swerun.test/none": "x" } } },
    });
  });

  it("an image that cannot be pulled ends after pull_timeout with the pull error", async () => {
    await startFails(
      /did not start within pull_timeout \(8 s\): (ErrImagePull|ImagePullBackOff)/,
      { pull_timeout: 8, image_pull_policy: "IfNotPresent" },
      "127.0.0.1:1/swerun-test/absent:1",
    );
  });
});
