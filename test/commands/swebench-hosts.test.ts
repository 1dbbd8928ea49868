import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import { basename, join } from "node:path";
import type Docker from "dockerode";
import { beforeAll, describe, expect, it } from "vitest";
import { runBatch } from "../../src/batch/batch.js";
import type { BatchOptions, BatchSummary } from "../../src/batch/batch-options.js";
import type { BatchDisplay } from "../../src/batch/display.js";
import { batchGrader } from "../../src/batch/grader.js";
import type { DockerHostConfig } from "../../src/config/docker-hosts.js";
import { loadConfig } from "../../src/config/load.js";
import { type Instance, readDatasetFile } from "../../src/datasets/dataset.js";
import { resolveDockerEndpoint } from "../../src/environments/docker/client.js";
import { evalInstances } from "../../src/eval/eval-instance.js";
import { ensureFixtureImage } from "../../src/fixture-images/fixture-image.js";
import { instancePreparer } from "../../src/fixture-images/instance-preparer.js";
import { HostPool } from "../../src/images/host-pool.js";
import { runCli, startCli, waitFor } from "../helpers/cli.js";
import { SCRIPTED_IN_DOCKER, writeDataset } from "../helpers/datasets.js";
import { dockerFixture, swerunContainers } from "../helpers/docker.js";
import { type ExtraDaemon, loadImages, startDaemon } from "../helpers/docker-daemons.js";
import { describeExtraDaemons } from "../helpers/docker-daemons-suite.js";
import { tempDir } from "../helpers/tmp.js";

const IMAGE = "swerun-demo/calc:latest";

/** The main daemon as `--docker-host URL:workers` (its tcp or ssh port, if any, before the worker count). */
function mainHostFlag(workers: number): string {
  const endpoint = resolveDockerEndpoint();
  const hasPort = /:\d+$/.test(endpoint.host.replace(/^[a-z]+:\/\//, ""));
  if (endpoint.kind === "tcp" && !hasPort) return `${endpoint.host}:${endpoint.port}:${workers}`;
  return `${endpoint.host}:${workers}`;
}

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

/** A display that shows nothing. */
const SILENT: BatchDisplay = {
  start: () => {},
  instanceStart: () => {},
  event: () => {},
  instanceEnd: () => {},
  message: () => {},
  stop: () => {},
};

/**
 * A display that keeps the batch's messages in `lines` and calls `act` once, with the instance's id, as the first
 * instance on `host` starts a command.
 */
function actOnFirstCommand(
  host: string,
  lines: string[],
  act: (id: string | undefined) => void,
): BatchDisplay {
  const workerHost = new Map<number, string | undefined>();
  let acted = false;
  return {
    ...SILENT,
    instanceStart: (worker, id, on) => workerHost.set(worker, on ? `${on} ${id}` : undefined),
    event: (worker, event) => {
      const [at, id] = workerHost.get(worker)?.split(" ") ?? [];
      if (event.type === "action_start" && at === host && !acted) {
        acted = true;
        act(id);
      }
    },
    message: (line) => lines.push(line),
  };
}

/**
 * runBatch of the scripted `instances` (the dataset file `path`, prepared in `dir`) over `hosts` in Docker with
 * networking off; `more` gives the output folder, workers, run id and display, and any other option.
 */
function runOnHosts(
  batch: { dir: string; path: string; instances: Instance[] },
  hosts: DockerHostConfig[],
  more: Pick<BatchOptions, "outputDir" | "workers" | "runId" | "display"> & Partial<BatchOptions>,
): Promise<BatchSummary> {
  return runBatch({
    instances: batch.instances,
    config: loadConfig(["swebench", "swebench-demo", 'environment.run_args=["--rm","--network","none"]']),
    redoExisting: false,
    subset: batch.path,
    split: "test",
    prepare: instancePreparer({}, batch.dir),
    hosts,
    hostsSource: "--docker-host",
    hostProbeMs: 60_000,
    imageOf: (instance) => String(instance.image_name),
    ...more,
  });
}

/** The pid of a process that has exited (a crashed run's pid label). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
    encoding: "utf8",
  });
  return Number(child.stdout);
}

describe("swerun swebench --docker-host: bad input", () => {
  const demo = ["swebench", "--subset", "demo", "-q"];

  it("refuses a host given twice, and an empty --docker-host named as typed (exit 2, one line)", async () => {
    const docker = [...demo, "--environment-class", "docker"];
    const twice = await runCli([...docker, "--docker-host", "ssh://a:2", "--docker-host", "ssh://a:4"]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toBe(
      "swerun: --docker-host ssh://a:4: ssh://a is given twice (one entry per daemon)\n",
    );
    const empty = await runCli([...docker, "--docker-host", ""]);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toBe(
      'swerun: --docker-host "": expected unix:///path, tcp://host:port or ssh://[user@]host\n',
    );
  });

  it("refuses -w with hosts, a host it cannot read, and hosts for the local environment, in one line (exit 2)", async () => {
    const both = await runCli([
      ...demo,
      "--environment-class",
      "docker",
      "--docker-host",
      "ssh://a:2",
      "-w",
      "4",
    ]);
    expect(both.code).toBe(2);
    expect(both.stderr).toBe(
      "swerun: --workers: with --docker-host each host has its own worker count (URL:N); the total is their sum\n",
    );
    const bad = await runCli([...demo, "--environment-class", "docker", "--docker-host", "gpu-a:8"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe(
      "swerun: --docker-host gpu-a:8: expected unix:///path, tcp://host:port or ssh://[user@]host\n",
    );
    const local = await runCli([...demo, "--environment-class", "local", "--docker-host", "ssh://a:2"]);
    expect(local.code).toBe(2);
    expect(local.stderr).toBe(
      "swerun: --docker-host: the hosts run Docker containers; it needs --environment-class docker\n",
    );
  });

  it("stops before running anything when no host answers", async () => {
    const dir = tempDir();
    const nowhere = `unix://${join(dir, "a.sock")}`;
    const out = join(dir, "out");
    const result = await runCli([
      ...demo,
      "--environment-class",
      "docker",
      "--docker-host",
      `${nowhere}:2`,
      "--docker-host",
      `unix://${join(dir, "b.sock")}`,
      "-o",
      out,
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(
        `^swerun: No Docker host answers \\(--docker-host\\): ${nowhere}: connect ENOENT \\S+; unix:\\S+: connect ENOENT \\S+; check that each daemon runs`,
      ),
    );
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(existsSync(join(out, "preds.json"))).toBe(false);
  });
});

await describeExtraDaemons("a batch across several Docker hosts (real extra daemons)", () => {
  let main: Docker;
  let b: ExtraDaemon;
  let c: ExtraDaemon;
  /** The main daemon's bridge: the extra daemons (no bridge, own network namespace) must leave it alone. */
  const bridges = () => readdirSync("/sys/class/net").filter((name) => name.startsWith("docker"));
  let before: string[];

  beforeAll(async () => {
    ({ docker: main } = await dockerFixture());
    before = bridges();
    [b, c] = await Promise.all([startDaemon(), startDaemon()]);
  });

  /** A dataset of `count` scripted instances in a fresh folder, its image built on the main daemon. */
  async function dataset(count: number, before = "sleep 0.3") {
    const dir = tempDir();
    const path = writeDataset(dir, count, before);
    const instances = (await readDatasetFile(path)) as Instance[];
    await ensureFixtureImage(IMAGE, instances[0] as Instance, dir);
    return { dir, path, instances, ids: instances.map((instance) => instance.instance_id).sort() };
  }

  /** Every host restarted if it was killed: each test starts with both extra daemons up. */
  async function bothUp() {
    for (const daemon of [b, c]) {
      try {
        await daemon.docker().ping();
      } catch {
        await daemon.restart();
      }
    }
  }

  it("spreads instances over three hosts, builds the image where it is missing, and leaves no container", async () => {
    await bothUp();
    const { dir, path, ids } = await dataset(6);
    // b gets the image from the main daemon; c has none and builds it itself.
    await loadImages(main, b.docker(), [IMAGE]);
    const out = join(dir, "out");
    const hosts = [mainHostFlag(1), `${b.host}:1`, `${c.host}:1`];
    const result = await runCli([
      "swebench",
      "--subset",
      path,
      ...SCRIPTED_IN_DOCKER,
      ...hosts.flatMap((host) => ["--docker-host", host]),
      "-o",
      out,
    ]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("exit statuses: Submitted 6");
    expect(Object.keys(readJson(join(out, "preds.json"))).sort()).toEqual(ids);
    const run = readJson(join(out, "run.json"));
    const names = [resolveDockerEndpoint().host, b.host, c.host];
    expect(run.hosts).toEqual(names.map((host) => ({ host, workers: 1, state: "up" })));
    const used = new Set(
      Object.values(run.cases as Record<string, { host: string }>).map((entry) => entry.host),
    );
    expect([...used].sort()).toEqual([...names].sort());
    // The trajectory records the host it ran on.
    const first = ids[0] ?? "";
    const trajectory = readJson(join(out, first, `${first}.traj.json`));
    expect(trajectory.info.config.environment.docker_hosts).toEqual([
      { host: run.cases[first].host, workers: 1 },
    ]);
    expect(await c.docker().getImage(IMAGE).inspect()).toBeTruthy();
    for (const docker of [main, b.docker(), c.docker()])
      expect(await swerunContainers(docker, run.run_id)).toEqual([]);
    expect(bridges()).toEqual(before);
  });

  it("--eval grades each instance on the host that ran it; nothing left on either host", async () => {
    await bothUp();
    const dir = tempDir();
    const out = join(dir, `hosts-eval-${process.pid}`);
    const result = await runCli([
      "swebench",
      "--subset",
      "demo",
      "--eval",
      ...SCRIPTED_IN_DOCKER,
      "--docker-host",
      mainHostFlag(1),
      "--docker-host",
      `${b.host}:1`,
      "-o",
      out,
    ]);
    expect(result.stderr.trim().split("\n")).toHaveLength(3);
    expect(result.stderr).not.toContain("grading lost");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("resolved: 3/3");
    const run = readJson(join(out, "run.json"));
    expect(run.eval).toMatchObject({ resolved: 3, graded: 3 });
    const cases = run.cases as Record<string, { host: string; resolved: boolean }>;
    const logs = join(out, "eval", "logs", "run_evaluation", run.eval.run_id);
    const model = readdirSync(logs).find((name) => name !== "run.json") ?? "";
    for (const [id, entry] of Object.entries(cases)) {
      expect(entry.resolved).toBe(true);
      const log = readFileSync(join(logs, model, id, "run_instance.log"), "utf8");
      expect(log).toContain(`Grading ${id} on Docker host ${entry.host}\n`);
    }
    expect(new Set(Object.values(cases).map((entry) => entry.host)).size).toBe(2);
    for (const docker of [main, b.docker()])
      expect(await swerunContainers(docker, run.eval.run_id)).toEqual([]);
  });

  it("--eval: a grading lost with its host is graded again on another host, and recorded once", async () => {
    await bothUp();
    const dir = tempDir();
    // Tests that take 3 s: the host is killed while an instance's grading runs there.
    const grading = {
      eval_script:
        "#!/bin/bash\nset -uxo pipefail\nexec 2>&1\ncd /testbed\n: '>>>>> Start Test Output'\nsleep 3\nbash test.sh\n: '>>>>> End Test Output'\n",
      log_parser: "parse_log_pytest",
      FAIL_TO_PASS: '["test.sh::test_add"]',
      PASS_TO_PASS: '["test.sh::test_add_zero"]',
    };
    const path = writeDataset(dir, 3, "true", grading);
    const instances = (await readDatasetFile(path)) as Instance[];
    await ensureFixtureImage(IMAGE, instances[0] as Instance, dir);
    await loadImages(main, b.docker(), [IMAGE]);
    const mainHost = resolveDockerEndpoint().host;
    const hosts: DockerHostConfig[] = [mainHost, b.host].map((host) => ({ host, workers: 1 }));
    const out = join(dir, `hosts-eval-lost-${process.pid}`);
    const lines: string[] = [];
    const grader = batchGrader({
      hosts,
      hostsSource: "--docker-host",
      instances: evalInstances(instances, path),
      rows: instances,
      datasetDir: dir,
      folder: out,
      runId: basename(out),
      modelName: "scripted",
      workers: 2,
      timeoutSeconds: 120,
      say: (line) => lines.push(line),
    });
    let lost: string | undefined;
    let killing: Promise<void> | undefined;
    const summary = await runOnHosts({ dir, path, instances }, hosts, {
      outputDir: out,
      workers: 2,
      runId: `hosts-eval-${process.pid}`,
      display: SILENT,
      onInstanceStart: (id, host) => grader.prepareEarly(id, host),
      onInstanceRunning: (id, host) => grader.prepare(id, host),
      onInstanceLost: (id) => grader.lost(id),
      onInstanceSubmitted: (id, submission, host) => {
        grader.submitted(id, submission, host);
        // The first submission on b: b's dockerd is killed a second later, while that grading's tests sleep.
        if (host?.host === b.host && !killing) {
          lost = id;
          killing = new Promise((resolve) => setTimeout(resolve, 1000)).then(() => b.kill());
        }
      },
      onInstanceEnd: (result, host) => grader.submit(result.instance_id, result.submission, host),
    });
    await killing;
    const { report } = await grader.finish();
    grader.close();
    expect(lost).toBeDefined();
    expect(summary.statuses.get("Submitted")?.length).toBe(3);
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^eval ${lost}: grading lost with Docker host ${b.host} \\(.*\\); graded again on ${mainHost}$`,
        ),
      ),
    );
    // Each instance told and recorded once, the lost one with its second grading's verdict.
    expect(lines.filter((line) => line.startsWith("eval ["))).toHaveLength(3);
    expect(report.resolved_instances).toBe(3);
    const run = readJson(join(out, "run.json"));
    expect(run.eval).toMatchObject({ resolved: 3, graded: 3 });
    expect(Object.keys(run.eval.instances)).toHaveLength(3);
    const log = readFileSync(
      join(out, "eval", "logs", "run_evaluation", basename(out), "scripted", lost ?? "", "run_instance.log"),
      "utf8",
    );
    expect(log).toContain(`on Docker host ${mainHost}\n`);
    expect(log).not.toContain(b.host);
    expect(await swerunContainers(main, basename(out))).toEqual([]);
  });

  it("loses a host mid-batch: its instance runs again on another, once in preds.json, no container left", async () => {
    await bothUp();
    const { dir, path, instances, ids } = await dataset(6);
    await Promise.all([loadImages(main, b.docker(), [IMAGE]), loadImages(main, c.docker(), [IMAGE])]);
    const mainHost = resolveDockerEndpoint().host;
    const hosts: DockerHostConfig[] = [mainHost, b.host, c.host].map((host) => ({ host, workers: 1 }));
    const lines: string[] = [];
    let lost: string | undefined;
    let killing: Promise<void> | undefined;
    // The first action of the first instance on b: b's dockerd is killed while the instance runs.
    const display = actOnFirstCommand(b.host, lines, (id) => {
      lost = id;
      killing = b.kill();
    });
    const out = join(dir, "out");
    const summary = await runOnHosts({ dir, path, instances }, hosts, {
      outputDir: out,
      workers: 3,
      runId: `hosts-test-${process.pid}`,
      display,
    });
    await killing;
    expect(lost).toBeDefined();
    expect(summary.statuses.get("Submitted")?.sort()).toEqual(ids);
    expect([...summary.statuses.keys()]).toEqual(["Submitted"]);
    expect(summary.hostsDown).toBeUndefined();
    expect(lines.some((line) => line.startsWith(`Docker host ${b.host} stopped answering (`))).toBe(true);
    expect(lines).toContain(
      `Docker host ${b.host} is down: containers of this run may be left there; once it answers, remove them with: swerun cleanup --run-id hosts-test-${process.pid} --docker-host ${b.host}`,
    );
    const log = readFileSync(join(out, "swerun.log"), "utf8");
    expect(log).toMatch(new RegExp(`${lost}: lost with Docker host ${b.host} \\(`));
    expect(readJson(join(out, "preds.json"))[lost ?? ""].model_patch).toMatch(/^diff --git/);
    expect(Object.keys(readJson(join(out, "preds.json"))).sort()).toEqual(ids);
    const run = readJson(join(out, "run.json"));
    expect(run.status).toBe("finished");
    expect(run.hosts.find((host: { host: string }) => host.host === b.host).state).toBe("down");
    expect(run.cases[lost ?? ""].host).not.toBe(b.host);
    expect(run.cases[lost ?? ""].exit_status).toBe("Submitted");
    for (const docker of [main, c.docker()]) expect(await swerunContainers(docker, run.run_id)).toEqual([]);
    // Once b answers again, the cleanup the batch named removes what the lost instance left there.
    await b.restart();
    expect((await runCli(["cleanup", "--run-id", run.run_id, "--docker-host", b.host])).code).toBe(0);
    expect(await swerunContainers(b.docker(), run.run_id)).toEqual([]);
  });

  it("a frozen daemon (SIGSTOP) is down once it does not answer in time: its instance runs again elsewhere", async () => {
    await bothUp();
    const { dir, path, instances, ids } = await dataset(4, "sleep 1.5");
    await Promise.all([loadImages(main, b.docker(), [IMAGE]), loadImages(main, c.docker(), [IMAGE])]);
    const hosts: DockerHostConfig[] = [b.host, c.host].map((host) => ({ host, workers: 1 }));
    const lines: string[] = [];
    let frozen: string | undefined;
    // b's dockerd is frozen as the first instance on it starts a command.
    const display = actOnFirstCommand(b.host, lines, (id) => {
      frozen = id;
      process.kill(b.pid(), "SIGSTOP");
    });
    const out = join(dir, "out");
    try {
      const summary = await runOnHosts({ dir, path, instances }, hosts, {
        outputDir: out,
        workers: 2,
        runId: `frozen-test-${process.pid}`,
        display,
        hostAnswerTimeoutMs: 2000,
      });
      expect(frozen).toBeDefined();
      expect(summary.statuses.get("Submitted")?.sort()).toEqual(ids);
      expect(lines).toContain(
        `Docker host ${b.host} stopped answering (no answer in 2 s); its 1 running instance(s) go back to the queue; trying it again every 60 s`,
      );
      const log = readFileSync(join(out, "swerun.log"), "utf8");
      expect(log).toMatch(new RegExp(`${frozen}: lost with Docker host ${b.host} \\(`));
      const run = readJson(join(out, "run.json"));
      expect(run.cases[frozen ?? ""]).toMatchObject({ exit_status: "Submitted", host: c.host });
      // The frozen attempt's command is not in the kept trajectory: the one that ran on c is.
      const trajectory = readJson(join(out, frozen ?? "", `${frozen}.traj.json`));
      expect(trajectory.info.config.environment.docker_hosts).toEqual([{ host: c.host, workers: 1 }]);
    } finally {
      process.kill(b.pid(), "SIGCONT");
    }
    await b.restart();
    expect(
      (await runCli(["cleanup", "--run-id", `frozen-test-${process.pid}`, "--docker-host", b.host])).code,
    ).toBe(0);
  }, 120_000);

  it("uses a host again once it answers, after removing what the run left there", async () => {
    await bothUp();
    const runId = `pool-test-${process.pid}`;
    const [image] = [(await dockerFixture()).images.base];
    await loadImages(main, b.docker(), [image]);
    // What a lost attempt leaves on a daemon that was unreachable, not restarted: a container never started.
    await b.docker().createContainer({
      name: `swerun-pool-test-${process.pid}`,
      Image: image,
      Cmd: ["sleep", "60"],
      Labels: { "swerun.run_id": runId, "swerun.instance_id": "i0", "swerun.keep": "false" },
      HostConfig: { NetworkMode: "none" },
    });
    const lines: string[] = [];
    const pool = await HostPool.open(
      [b.host, c.host].map((host) => ({ host, workers: 1 })),
      "--docker-host",
      { say: (line) => lines.push(line), probeMs: 100, runId },
    );
    try {
      const first = await pool.acquire("i1", image);
      expect(first?.docker.name).toBe(b.host); // b has the image, c does not
      await b.kill();
      expect(await pool.lost(first as NonNullable<typeof first>)).toBe(true);
      expect(lines[0]).toMatch(
        new RegExp(
          `^Docker host ${b.host} stopped answering \\(.*\\); its 1 running instance\\(s\\) go back`,
        ),
      );
      pool.release(first as NonNullable<typeof first>, "i1", false);
      const second = await pool.acquire("i1", image);
      expect(second?.docker.name).toBe(c.host);
      expect(pool.status().map((host) => host.state)).toEqual(["down", "up"]);
      await b.restart();
      await waitFor(() => lines.some((line) => line.includes("answers again")), 20_000);
      expect(lines.at(-1)).toBe(
        `Docker host ${b.host} answers again: using it (1 workers); removed swerun-pool-test-${process.pid} (instance i0) on ${b.host}`,
      );
      const third = await pool.acquire("i2", image);
      expect(third?.docker.name).toBe(b.host);
      expect(await swerunContainers(b.docker(), runId)).toEqual([]);
    } finally {
      pool.close();
    }
  });

  it("stops cleanly when every host is down, resumable; the resume on another host finishes", async () => {
    await bothUp();
    const { dir, path, ids } = await dataset(8);
    await Promise.all([loadImages(main, b.docker(), [IMAGE]), loadImages(main, c.docker(), [IMAGE])]);
    const out = join(dir, "out");
    const args = ["swebench", "--subset", path, ...SCRIPTED_IN_DOCKER, "-o", out];
    const run = startCli([...args, "--docker-host", `${b.host}:1`, "--docker-host", `${c.host}:1`]);
    const finished = () => {
      try {
        return Object.keys(readJson(join(out, "preds.json"))).length;
      } catch {
        return 0;
      }
    };
    await waitFor(() => finished() >= 1, 40_000, run.child);
    await Promise.all([b.kill(), c.kill()]);
    const stopped = await run.done;
    expect(stopped.code).toBe(3);
    expect(stopped.stderr).toContain(
      "Every Docker host is down: the batch stops. It is resumable: run the same command again (finished instances are kept).",
    );
    const record = readJson(join(out, "run.json"));
    expect(record.status).toBe("interrupted");
    expect(record.hosts.map((host: { state: string }) => host.state)).toEqual(["down", "down"]);
    const before = finished();
    expect(before).toBeGreaterThanOrEqual(1);
    expect(before).toBeLessThan(8);
    // Every recorded case finished; the lost ones left no trajectory that counts as finished.
    expect(
      Object.values(record.cases).every(
        (entry) => (entry as { exit_status: string }).exit_status === "Submitted",
      ),
    ).toBe(true);
    // The resume runs on the main daemon and b, back up; what the stopped run left on b is removed at the start.
    await Promise.all([b.restart(), c.restart()]);
    const leftover = `swerun-leftover-${process.pid}`;
    await b.docker().createContainer({
      name: leftover,
      Image: IMAGE,
      Cmd: ["sleep", "60"],
      Labels: { "swerun.run_id": record.run_id, "swerun.instance_id": "x", "swerun.keep": "false" },
      HostConfig: { NetworkMode: "none" },
    });
    const resumed = await runCli([...args, "--docker-host", mainHostFlag(1), "--docker-host", `${b.host}:1`]);
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain("exit statuses: Submitted 8");
    expect(resumed.stderr).toMatch(new RegExp(`^ {2}removed ${leftover} .* on ${b.host}$`, "m"));
    expect(resumed.stderr).toContain(
      `The earlier run ${record.run_id} also ran on Docker hosts this batch does not use; remove what it left there with: swerun cleanup --run-id ${record.run_id} --docker-host ${c.host}`,
    );
    expect(Object.keys(readJson(join(out, "preds.json"))).sort()).toEqual(ids);
    for (const id of ids)
      expect(readJson(join(out, id, `${id}.traj.json`)).info.exit_status).toBe("Submitted");
    for (const docker of [main, b.docker()])
      expect(await swerunContainers(docker, record.run_id)).toEqual([]);
    expect((await runCli(["cleanup", "--run-id", record.run_id, "--docker-host", c.host])).code).toBe(0);
    expect(await swerunContainers(c.docker(), record.run_id)).toEqual([]);
  });

  it("swerun cleanup --docker-host cleans every host given, and says which it cannot reach", async () => {
    await bothUp();
    const runId = `cleanup-hosts-${process.pid}`;
    const image = (await dockerFixture()).images.base;
    await Promise.all([loadImages(main, b.docker(), [image]), loadImages(main, c.docker(), [image])]);
    for (const daemon of [b, c]) {
      await daemon.docker().createContainer({
        name: `swerun-cleanup-hosts-${process.pid}`,
        Image: image,
        Cmd: ["sleep", "60"],
        Labels: {
          "swerun.run_id": runId,
          "swerun.instance_id": "x",
          "swerun.pid": String(deadPid()),
          "swerun.host": os.hostname(),
          "swerun.keep": "false",
        },
        HostConfig: { NetworkMode: "none" },
      });
    }
    const nowhere = `unix://${join(tempDir(), "no.sock")}`;
    const result = await runCli([
      "cleanup",
      "--run-id",
      runId,
      "--docker-host",
      b.host,
      "--docker-host",
      `${c.host}:4`,
      "--docker-host",
      nowhere,
    ]);
    expect(result.code).toBe(1);
    const lines = result.stdout.trim().split("\n");
    expect(lines[0]).toBe(`Docker host ${b.host}:`);
    expect(lines[1]).toMatch(new RegExp(`^  removed swerun-cleanup-hosts-${process.pid} .* run ${runId} `));
    expect(lines).toContain(`Docker host ${c.host}:`);
    expect(lines).toContain(`Docker host ${nowhere}:`);
    expect(lines.at(-1)).toMatch(
      new RegExp(
        `^  could not reach ${nowhere}: Cannot connect to the Docker daemon at ${nowhere} \\(from --docker-host\\)`,
      ),
    );
    for (const docker of [b.docker(), c.docker()]) expect(await swerunContainers(docker, runId)).toEqual([]);
    expect(existsSync(nowhere.slice("unix://".length))).toBe(false);
  });
});
