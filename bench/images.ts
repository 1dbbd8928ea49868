/**
 * Pulling ahead: 20 instances, each with its own 150 MB image (the base test root filesystem plus random,
 * incompressible data) in a real local registry (Debian's docker-registry on 127.0.0.1), a scripted agent
 * that takes about 2 s (`sleep 2`), 4 workers, an image budget of 8 images. Wall time of the batch with
 * pull-ahead (--pull-workers 2) against (a) no pull-ahead (--pull-workers 0: each worker pulls its image
 * when its instance starts) and (b) the floor: the same batch with every image already on the daemon. The
 * images of this bench are removed between batches. Peak image disk is sampled every 50 ms while each
 * batch runs (the images this batch pulled, as `docker images` sizes them) and read from run.json.
 * Before the batches it pulls the images alone (nothing else running) 1, 2, 3 and 4 at a time: the fastest
 * of these, plus the shortest time one instance takes in the floor batch, bounds any batch that pulls them
 * (its last image cannot be there sooner, and its instance then runs), so it says whether the goal (pull-ahead
 * within 1.25x of the floor) can be met on this machine at all.
 * Usage: node dist/bench/images.js [instances, default 20] [MB per image, default 150] [rounds, default 1]
 *   [agent seconds, default 2] [pull workers of the pull-ahead batches, comma-separated, default 2]
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import { runBatch } from "../src/batch/batch.js";
import type { BatchDisplay } from "../src/batch/display.js";
import { loadConfig } from "../src/config/load.js";
import type { Instance } from "../src/datasets/dataset.js";
import { closeDockerClient, connectDocker } from "../src/environments/docker/client.js";
import { instancePreparer } from "../src/fixture-images/instance-preparer.js";
import { baseRootfs } from "../src/fixture-images/rootfs.js";
import { formatBytes } from "../src/util/bytes.js";
import { step } from "../test/helpers/datasets.js";
import {
  type PushedImage,
  pushRandomImages,
  registryProblem,
  startRegistry,
} from "../test/helpers/local-registry.js";
import { median } from "./docker-floor.js";

const INSTANCES = Number(process.argv[2] ?? 20);
const MEGABYTES = Number(process.argv[3] ?? 150);
const ROUNDS = Number(process.argv[4] ?? 1);
const AGENT_SECONDS = Number(process.argv[5] ?? 2);
const WORKERS = 4;
const BUDGET_IMAGES = 8;
const PULL_WORKERS = (process.argv[6] ?? "2").split(",").map(Number);

const quiet: BatchDisplay = {
  start: () => {},
  instanceStart: () => {},
  event: () => {},
  instanceEnd: () => {},
  message: () => {},
  stop: () => {},
};

async function pull(docker: Docker, image: string): Promise<void> {
  const stream = await docker.pull(image);
  await new Promise<void>((resolve, reject) =>
    docker.modem.followProgress(stream, (error: Error | null) => (error ? reject(error) : resolve())),
  );
}

/** Pulls every image, `concurrency` at a time, in order; returns the seconds it took. */
async function pullAll(docker: Docker, images: string[], concurrency: number): Promise<number> {
  const queue = [...images];
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let image = queue.shift(); image; image = queue.shift()) await pull(docker, image);
    }),
  );
  return (performance.now() - start) / 1000;
}

const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

interface Mode {
  name: string;
  pullWorkers: number;
  /** Every image pulled before the batch (the floor). */
  present: boolean;
}

async function main(): Promise<void> {
  const problem = registryProblem();
  if (problem) throw new Error(`bench:images needs a local registry: ${problem}`);
  const docker = await connectDocker();
  const registry = await startRegistry();
  const dir = mkdtempSync(join(tmpdir(), "swerun-bench-images-"));
  const repo = `swerun-bench-images-${randomBytes(4).toString("hex")}`;
  const ours = async () =>
    (await docker.listImages())
      .flatMap((image) => (image.RepoTags ?? []).map((tag) => ({ tag, size: image.Size })))
      .filter(({ tag }) => tag.includes(`/${repo}-`));
  const removeOurs = async () => {
    for (const { tag } of await ours()) await docker.getImage(tag).remove({ force: true });
  };
  try {
    const baseMb = baseRootfs().tar().length / 1e6;
    const started = performance.now();
    const images: PushedImage[] = await pushRandomImages(
      docker,
      registry,
      repo,
      INSTANCES,
      Math.max(1, Math.round(MEGABYTES - baseMb)),
    );
    process.stderr.write(
      `pushed ${INSTANCES} images of ${formatBytes(images[0]?.bytes ?? 0)} in ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
    );
    const instances: Instance[] = images.map((pushed, i) => ({
      instance_id: `bench__images-${i + 1}`,
      problem_statement: "wait, then submit",
      image_name: pushed.image,
      swerun_scripted_outputs: [
        step(`sleep ${AGENT_SECONDS}`),
        step(`echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && echo fix-${i + 1}`),
      ],
    }));
    const path = join(dir, "dataset.json");
    writeFileSync(path, JSON.stringify(instances));
    const budget = BUDGET_IMAGES * (images[0]?.bytes ?? 0);
    const modes: Mode[] = [
      { name: "floor (every image present)", pullWorkers: 2, present: true },
      ...PULL_WORKERS.map((workers) => ({
        name: `pull-ahead (--pull-workers ${workers})`,
        pullWorkers: workers,
        present: false,
      })),
      { name: "no pull-ahead (--pull-workers 0)", pullWorkers: 0, present: false },
    ];
    // Pulling alone, 1 to 4 at a time: where pull time goes on this daemon.
    const alone = new Map<number, number>();
    for (const concurrency of [1, 2, 3, 4]) {
      await removeOurs();
      const seconds = await pullAll(
        docker,
        images.map((pushed) => pushed.image),
        concurrency,
      );
      alone.set(concurrency, seconds);
      process.stderr.write(
        `pulled the ${INSTANCES} images alone ${concurrency} at a time in ${seconds.toFixed(1)} s (load ${loadAverage()})\n`,
      );
    }
    const results = new Map<
      string,
      { walls: number[]; ratios: number[]; peaks: number[]; waited: number[]; ahead: number[] }
    >();
    const pullSeconds: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const walls = new Map<Mode, number>();
      for (const mode of modes.map((_, i) => modes[(i + round) % modes.length] as Mode)) {
        await removeOurs();
        if (mode.present)
          pullSeconds.push(
            await pullAll(
              docker,
              images.map((pushed) => pushed.image),
              4,
            ),
          );
        const present = new Set((await ours()).map(({ tag }) => tag));
        let peak = 0;
        let sampling = true;
        const sampler = (async () => {
          while (sampling) {
            const held = (await ours())
              .filter(({ tag }) => !present.has(tag))
              .reduce((sum, { size }) => sum + size, 0);
            peak = Math.max(peak, held);
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        })();
        const config = loadConfig([
          "swebench",
          "swebench-demo",
          "agent.step_limit=0",
          'environment.run_args=["--rm","--network","none"]',
        ]);
        const out = join(dir, `out-${round}-${modes.indexOf(mode)}`);
        const start = performance.now();
        const summary = await runBatch({
          instances,
          config,
          outputDir: out,
          workers: WORKERS,
          redoExisting: true,
          runId: `bench-images-${round}-${modes.indexOf(mode)}`,
          subset: path,
          split: "test",
          display: quiet,
          prepare: instancePreparer({}, undefined),
          images: {
            budget: { bytes: budget, source: "--image-budget" },
            pullWorkers: mode.pullWorkers,
            keep: [],
            imageOf: (instance) => String(instance.image_name),
          },
        });
        const wall = (performance.now() - start) / 1000;
        process.stderr.write(`${mode.name}: ${wall.toFixed(1)} s (load ${loadAverage()})\n`);
        sampling = false;
        await sampler;
        const submitted = summary.statuses.get("Submitted")?.length ?? 0;
        if (submitted !== INSTANCES)
          throw new Error(`${mode.name}: only ${submitted} of ${INSTANCES} submitted`);
        const record = JSON.parse(readFileSync(join(out, "run.json"), "utf8"));
        walls.set(mode, wall);
        const entry = results.get(mode.name) ?? { walls: [], ratios: [], peaks: [], waited: [], ahead: [] };
        entry.ahead.push(record.images.pulled_ahead.length);
        entry.walls.push(wall);
        entry.peaks.push(Math.max(peak, record.images.peak_bytes));
        entry.waited.push(
          record.images.waited.reduce((sum: number, waited: { seconds: number }) => sum + waited.seconds, 0),
        );
        results.set(mode.name, entry);
      }
      const floor = walls.get(modes[0] as Mode) ?? 1;
      for (const [mode, wall] of walls) results.get(mode.name)?.ratios.push(wall / floor);
    }
    const rows = [
      `${INSTANCES} instances, each its own ${formatBytes(images[0]?.bytes ?? 0)} image in a local registry, agents of ~${AGENT_SECONDS} s (\`sleep ${AGENT_SECONDS}\`), ${WORKERS} workers, --image-budget ${formatBytes(budget)} (${BUDGET_IMAGES} images; the batch's images take ${formatBytes(images.reduce((sum, pushed) => sum + pushed.bytes, 0))}), ${ROUNDS} round(s)`,
      "",
      "| batch | wall time (s, median) | vs floor | images pulled ahead | agents waited for images (s, total) | peak image disk (pulled by the batch) |",
      "| --- | ---: | ---: | ---: | ---: | ---: |",
    ];
    for (const mode of modes) {
      const entry = results.get(mode.name);
      if (!entry) continue;
      rows.push(
        `| ${mode.name} | ${median(entry.walls).toFixed(1)} | ${median(entry.ratios).toFixed(2)}x | ${median(entry.ahead)} | ${median(entry.waited).toFixed(1)} | ${formatBytes(Math.max(...entry.peaks))} |`,
      );
    }
    const mb = images.reduce((sum, pushed) => sum + pushed.bytes, 0) / 1e6;
    const [best, fastest] = [...alone].sort(([, a], [, b]) => a - b)[0] ?? [0, 0];
    const floorWall = median(results.get(modes[0]?.name ?? "")?.walls ?? [0]);
    // The floor batch runs INSTANCES / WORKERS instances per worker: one instance takes at least this long.
    const instance = (floorWall * WORKERS) / INSTANCES;
    const bound = fastest + instance;
    rows.push(
      "",
      `Pulling the ${INSTANCES} images alone (nothing else running): ${[...alone].map(([c, seconds]) => `${c} at a time ${seconds.toFixed(1)} s (${(mb / seconds).toFixed(0)} MB/s)`).join(", ")}; before the floor batch, 4 at a time: ${median(pullSeconds).toFixed(1)} s.`,
      `No batch that pulls them can end before the fastest of these (${fastest.toFixed(1)} s, ${best} at a time) plus one instance of the floor batch (${instance.toFixed(1)} s): ${bound.toFixed(1)} s, ${(bound / floorWall).toFixed(2)}x the floor; the goal (1.25x, ${(1.25 * floorWall).toFixed(1)} s) ${bound <= 1.25 * floorWall ? "can be met" : "cannot be met by any schedule"} on this machine.`,
    );
    process.stdout.write(`${rows.join("\n")}\n`);
  } finally {
    await removeOurs().catch(() => {});
    closeDockerClient(docker);
    await registry.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
