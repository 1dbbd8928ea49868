/**
 * Batch throughput in Docker: 20 instances x 20 scripted steps at 1, 2 and 4 workers (containers started
 * and removed included). Reports wall time, instances per minute, peak memory of the process, and the
 * median step time against a bare Engine API exec and a bare shell session measured in the same run, and
 * three floors measured right after each batch: the time the same number of bare containers take to be
 * created, started and removed by as many workers (the containers alone), the same containers running the
 * same commands through a bare read loop (containers + commands: no model, no trajectory, none of the
 * session's guarantees), and that loop with what an exec guarantees a command, at the least it costs in a
 * shell (each command under setsid, its output through `cat`).
 * With rounds > 1, each batch and its floors alternate that many times; each column is the median.
 * Usage: node dist/bench/batch.js [instances, default 20] [steps, default 20] [workers, default 1,2,4]
 *        [rounds, default 1]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runBatch } from "../src/batch/batch.js";
import type { BatchDisplay } from "../src/batch/display.js";
import { loadConfig } from "../src/config/load.js";
import type { Instance } from "../src/datasets/dataset.js";
import { readDatasetFile } from "../src/datasets/dataset.js";
import { closeDockerClient, connectDocker } from "../src/environments/docker/client.js";
import { ensureFixtureImage } from "../src/fixture-images/fixture-image.js";
import { instancePreparer } from "../src/fixture-images/instance-preparer.js";
import { apiExec, bareLoopContainers, bareSession, median } from "./docker-floor.js";
import { BENCH_IMAGE, SUBMIT_COMMAND, scriptedCalcDataset } from "./scripted-dataset.js";

const INSTANCES = Number(process.argv[2] ?? 20);
const STEPS = Number(process.argv[3] ?? 20);
const WORKERS = (process.argv[4] ?? "1,2,4").split(",").map(Number);
const ROUNDS = Number(process.argv[5] ?? 1);
const COMMAND = "echo step && ls";
const IMAGE = BENCH_IMAGE;

const dataset = (dir: string) => scriptedCalcDataset(dir, INSTANCES, STEPS, COMMAND);

/** Step times (between model calls of one instance), collected through the display hooks. */
function collector(steps: number[]): BatchDisplay {
  const last = new Map<number, number>();
  return {
    start: () => {},
    instanceStart: (worker) => last.delete(worker),
    event: (worker, event) => {
      if (event.type !== "model_call_start") return;
      const now = performance.now();
      const previous = last.get(worker);
      if (previous !== undefined) steps.push(now - previous);
      last.set(worker, now);
    },
    instanceEnd: () => {},
    message: () => {},
    stop: () => {},
  };
}

/** The floors of one action: a bare Engine API exec, and a round trip through a bare shell session. */
async function floors(): Promise<{ exec: number; session: number }> {
  const docker = await connectDocker();
  const container = await docker.createContainer({
    name: `swerun-bench-floor-${process.pid}`,
    Image: IMAGE,
    Cmd: ["sleep", "1h"],
    Labels: { "swerun.run_id": "bench" },
    HostConfig: { NetworkMode: "none" },
  });
  await container.start();
  const times: number[] = [];
  const shell: number[] = [];
  try {
    for (let i = 0; i < 60; i++) times.push(await apiExec(container, ["bash", "-c", COMMAND]));
    const bare = await bareSession(container, ["bash", "-c"]);
    for (let i = 0; i < 60; i++) shell.push(await bare.run(COMMAND));
    bare.close();
  } finally {
    await container.remove({ force: true }).catch(() => {});
    closeDockerClient(docker);
  }
  return { exec: median(times.slice(10)), session: median(shell.slice(10)) };
}

/** The containers alone: create, start and remove INSTANCES `sleep` containers, `workers` at a time. */
async function containersFloor(workers: number): Promise<number> {
  const docker = await connectDocker();
  let left = INSTANCES;
  const start = performance.now();
  try {
    await Promise.all(
      Array.from({ length: workers }, async () => {
        while (left > 0) {
          left -= 1;
          const container = await docker.createContainer({
            Image: IMAGE,
            Cmd: ["sleep", "1h"],
            Labels: { "swerun.run_id": "bench" },
            HostConfig: { AutoRemove: true, NetworkMode: "none" },
          });
          await container.start();
          await container.remove({ force: true });
        }
      }),
    );
  } finally {
    closeDockerClient(docker);
  }
  return (performance.now() - start) / 1000;
}

/** Containers + commands: the same containers running the same commands through a bare loop. */
async function commandsFloor(
  workers: number,
  interpreter: string[],
  cwd: string,
  guarantees = false,
): Promise<number> {
  const docker = await connectDocker();
  try {
    return await bareLoopContainers(docker, {
      image: IMAGE,
      instances: INSTANCES,
      workers,
      interpreter,
      cwd,
      commands: [...Array.from({ length: STEPS - 1 }, () => COMMAND), SUBMIT_COMMAND],
      guarantees,
    });
  } finally {
    closeDockerClient(docker);
  }
}

interface Round {
  wall: number;
  peak: number;
  steps: number[];
  alone: number;
  commands: number;
  /** Containers + commands, each command under setsid with its output through `cat`. */
  guarded: number;
}

/** One batch of `workers`, then its two floors right after it, in this process. */
async function batchRound(
  dir: string,
  path: string,
  instances: Instance[],
  workers: number,
  round: number,
): Promise<Round> {
  const config = loadConfig([
    "swebench",
    "swebench-demo",
    "agent.step_limit=0",
    'environment.run_args=["--rm","--network","none"]',
  ]);
  const steps: number[] = [];
  peak = process.memoryUsage().rss;
  const start = performance.now();
  const summary = await runBatch({
    instances,
    config,
    outputDir: join(dir, `out-${workers}-${round}`),
    workers,
    redoExisting: true,
    runId: `bench-${workers}-${round}`,
    subset: path,
    split: "test",
    display: collector(steps),
    prepare: instancePreparer({}, dir),
  });
  const wall = (performance.now() - start) / 1000;
  // The batch's own peak, before the floors run in this process.
  const batchPeak = Math.max(peak, process.memoryUsage().rss);
  const submitted = summary.statuses.get("Submitted")?.length ?? 0;
  if (submitted !== INSTANCES)
    throw new Error(
      `only ${submitted} of ${INSTANCES} submitted: ${[...summary.statuses.keys()].join(", ")}`,
    );
  const alone = await containersFloor(workers);
  const { interpreter, cwd } = config.environment as { interpreter: string[]; cwd: string };
  const commands = await commandsFloor(workers, interpreter, cwd || "/");
  const guarded = await commandsFloor(workers, interpreter, cwd || "/", true);
  return { wall, peak: batchPeak, steps, alone, commands, guarded };
}

/** The process's peak RSS while a batch runs (sampled every 10 ms). */
let peak = 0;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "swerun-bench-batch-"));
  const path = dataset(dir);
  const instances = (await readDatasetFile(path)) as Instance[];
  await ensureFixtureImage(IMAGE, instances[0] as Instance, dir);
  const floor = await floors();
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  const rows = [
    `${INSTANCES} instances x ${STEPS} scripted steps in Docker (\`bash -c '${COMMAND}'\`), ${ROUNDS} round(s), medians; floors: bare API exec ${floor.exec.toFixed(1)} ms, bare shell session ${floor.session.toFixed(1)} ms`,
    "",
    "| workers | wall time (s) | containers alone (s) | vs containers alone | containers + commands (s) | vs containers + commands | with setsid + `cat` (s) | vs that | instances/min | peak RSS (MiB) | median step (ms) | step over the exec floor | step - session floor (ms) |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
  ];
  const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  const loadBefore = loadAverage();
  try {
    for (const workers of WORKERS) {
      const measured: Round[] = [];
      for (let round = 0; round < ROUNDS; round++)
        measured.push(await batchRound(dir, path, instances, workers, round));
      const wall = median(measured.map((one) => one.wall));
      const batchPeak = Math.max(...measured.map((one) => one.peak));
      const step = median(measured.flatMap((one) => one.steps));
      const alone = median(measured.map((one) => one.alone));
      const commands = median(measured.map((one) => one.commands));
      const guarded = median(measured.map((one) => one.guarded));
      rows.push(
        `| ${workers} | ${wall.toFixed(2)} | ${alone.toFixed(2)} | ${(wall / alone).toFixed(2)}x | ${commands.toFixed(2)} | ${(wall / commands).toFixed(2)}x | ${guarded.toFixed(2)} | ${(wall / guarded).toFixed(2)}x | ${((INSTANCES / wall) * 60).toFixed(0)} | ${(batchPeak / 2 ** 20).toFixed(0)} | ${step.toFixed(1)} | ${(step / floor.exec).toFixed(2)}x | ${(step - floor.session).toFixed(1)} |`,
      );
    }
  } finally {
    clearInterval(sampler);
    rmSync(dir, { recursive: true, force: true });
  }
  rows.push("", `load average before: ${loadBefore}, after: ${loadAverage()}`);
  process.stdout.write(`${rows.join("\n")}\n`);
}

await main();
