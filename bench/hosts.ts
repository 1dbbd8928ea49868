/**
 * A batch across several Docker hosts: 20 instances x 20 scripted steps on 1 host x 4 workers, 2 hosts x 2,
 * and 3 hosts (2 + 1 + 1), the same 4 workers in total. The extra hosts are dockerd processes of their own
 * started on this machine (root needed), so this measures what the pool costs, not how it scales. Reports the
 * wall time, the wall time against a batch without a pool in the same round, and the scheduling overhead per
 * instance: on each worker, the time from an instance's end to the next one's start (taking it from the queue,
 * choosing a host), and the cost of choosing a host for an image no host was asked about yet (one inspect per
 * free host, as for every SWE-bench instance, whose images differ). Each round starts with the next layout,
 * so warm-up and load drifts hit all alike.
 * Usage: node dist/bench/hosts.js [instances, default 20] [steps, default 20] [rounds, default 4]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runBatch } from "../src/batch/batch.js";
import type { BatchDisplay } from "../src/batch/display.js";
import type { DockerHostConfig } from "../src/config/docker-hosts.js";
import { loadConfig } from "../src/config/load.js";
import { type Instance, readDatasetFile } from "../src/datasets/dataset.js";
import {
  closeDockerClient,
  connectDocker,
  resolveDockerEndpoint,
} from "../src/environments/docker/client.js";
import { ensureFixtureImage } from "../src/fixture-images/fixture-image.js";
import { instancePreparer } from "../src/fixture-images/instance-preparer.js";
import { HostPool } from "../src/images/host-pool.js";
import {
  type ExtraDaemon,
  extraDaemonsProblem,
  loadImages,
  startDaemon,
  stopDaemons,
} from "../test/helpers/docker-daemons.js";
import { median } from "./docker-floor.js";
import { BENCH_IMAGE, scriptedCalcDataset } from "./scripted-dataset.js";

const INSTANCES = Number(process.argv[2] ?? 20);
const STEPS = Number(process.argv[3] ?? 20);
const ROUNDS = Number(process.argv[4] ?? 4);
const COMMAND = "echo step && ls";
const IMAGE = BENCH_IMAGE;

const dataset = (dir: string) => scriptedCalcDataset(dir, INSTANCES, STEPS, COMMAND);

/** The gaps between one instance's end and the next one's start on the same worker, through the display hooks. */
function gapCollector(gaps: number[]): BatchDisplay {
  const ended = new Map<number, number>();
  return {
    start: () => {},
    instanceStart: (worker) => {
      const previous = ended.get(worker);
      if (previous !== undefined) gaps.push(performance.now() - previous);
    },
    event: () => {},
    instanceEnd: (worker) => ended.set(worker, performance.now()),
    message: () => {},
    stop: () => {},
  };
}

interface Layout {
  name: string;
  /** Undefined: no pool, the daemon of DOCKER_HOST with 4 workers (as without --docker-host). */
  hosts: DockerHostConfig[] | undefined;
}

/** Median time of `acquire` for images the pool has not asked about (each a fresh one, absent everywhere). */
async function coldAcquire(hosts: DockerHostConfig[]): Promise<number> {
  const pool = await HostPool.open(hosts, "bench", { say: () => {} });
  const times: number[] = [];
  try {
    for (let i = 0; i < 30; i++) {
      const start = performance.now();
      const host = await pool.acquire(`i${i}`, `swerun-bench/missing-${process.pid}-${i}:latest`);
      times.push(performance.now() - start);
      if (host) pool.release(host, `i${i}`, false);
    }
  } finally {
    pool.close();
  }
  return median(times.slice(5));
}

async function main(): Promise<void> {
  const problem = extraDaemonsProblem();
  if (problem) throw new Error(`bench:hosts starts extra dockerd processes: ${problem}`);
  const dir = mkdtempSync(join(tmpdir(), "swerun-bench-hosts-"));
  const path = dataset(dir);
  const instances = (await readDatasetFile(path)) as Instance[];
  await ensureFixtureImage(IMAGE, instances[0] as Instance, dir);
  const mainHost = resolveDockerEndpoint().host;
  const source = await connectDocker();
  const extra: ExtraDaemon[] = [];
  try {
    extra.push(...(await Promise.all([startDaemon(), startDaemon()])));
    for (const daemon of extra) await loadImages(source, daemon.docker(), [IMAGE]);
    const [b, c] = extra as [ExtraDaemon, ExtraDaemon];
    const layouts: Layout[] = [
      { name: "no pool, -w 4", hosts: undefined },
      { name: "1 host x 4", hosts: [{ host: mainHost, workers: 4 }] },
      {
        name: "2 hosts x 2",
        hosts: [
          { host: mainHost, workers: 2 },
          { host: b.host, workers: 2 },
        ],
      },
      {
        name: "3 hosts (2+1+1)",
        hosts: [
          { host: mainHost, workers: 2 },
          { host: b.host, workers: 1 },
          { host: c.host, workers: 1 },
        ],
      },
    ];
    const results = new Map<string, { walls: number[]; ratios: number[]; gaps: number[] }>();
    for (let round = 0; round < ROUNDS; round++) {
      const walls = new Map<Layout, number>();
      const order = layouts.map((_, i) => layouts[(i + round) % layouts.length] as Layout);
      for (const layout of order) {
        const config = loadConfig([
          "swebench",
          "swebench-demo",
          "agent.step_limit=0",
          'environment.run_args=["--rm","--network","none"]',
        ]);
        const gaps: number[] = [];
        const start = performance.now();
        const summary = await runBatch({
          instances,
          config,
          outputDir: join(dir, `out-${round}-${layouts.indexOf(layout)}`),
          workers: 4,
          redoExisting: true,
          runId: `bench-hosts-${round}-${layouts.indexOf(layout)}`,
          subset: path,
          split: "test",
          display: gapCollector(gaps),
          prepare: instancePreparer({}, dir),
          ...(layout.hosts ? { hosts: layout.hosts, hostsSource: "bench" } : {}),
          imageOf: () => IMAGE,
        });
        const wall = (performance.now() - start) / 1000;
        const submitted = summary.statuses.get("Submitted")?.length ?? 0;
        if (submitted !== INSTANCES)
          throw new Error(`${layout.name}: only ${submitted} of ${INSTANCES} submitted`);
        walls.set(layout, wall);
        const entry = results.get(layout.name) ?? { walls: [], ratios: [], gaps: [] };
        entry.walls.push(wall);
        entry.gaps.push(...gaps);
        results.set(layout.name, entry);
      }
      const floor = walls.get(layouts[0] as Layout) ?? 1;
      for (const [layout, wall] of walls) results.get(layout.name)?.ratios.push(wall / floor);
    }
    const rows = [
      `${INSTANCES} instances x ${STEPS} scripted steps (\`bash -c '${COMMAND}'\`), 4 workers in total, ${ROUNDS} rounds; every daemon on this one machine`,
      "",
      "| layout | wall time (s, median) | vs no pool | instances/min | between instances (ms, median) | choosing a host for a new image (ms, median) |",
      "| --- | ---: | ---: | ---: | ---: | ---: |",
    ];
    for (const layout of layouts) {
      const entry = results.get(layout.name);
      if (!entry) continue;
      const wall = median(entry.walls);
      const cold = layout.hosts ? (await coldAcquire(layout.hosts)).toFixed(2) : "–";
      rows.push(
        `| ${layout.name} | ${wall.toFixed(1)} | ${median(entry.ratios).toFixed(2)}x | ${((INSTANCES / wall) * 60).toFixed(0)} | ${median(entry.gaps).toFixed(2)} | ${cold} |`,
      );
    }
    process.stdout.write(`${rows.join("\n")}\n`);
  } finally {
    closeDockerClient(source);
    await stopDaemons();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
