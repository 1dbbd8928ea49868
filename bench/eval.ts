/**
 * Grading overhead. (1) Per graded instance: swerun's whole grading of the gold patch of the test
 * repository (container start, patch apply, the eval script, parsing, report files, removal) minus the eval
 * script's own time, against the floor of a bare `docker run --rm` of the same image (create, start, wait,
 * remove a container running `true`), alternating, medians. (2) What `--eval` adds to the demo batch:
 * `swerun swebench --subset demo -w 2` with and without `--eval`, alternating, medians.
 * Usage: node dist/bench/eval.js [rounds, default 5]
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type Docker from "dockerode";
import type { Instance } from "../src/datasets/dataset.js";
import { closeDockerClient, connectDocker } from "../src/environments/docker/client.js";
import { evalInstances } from "../src/eval/eval-instance.js";
import { gradeInstance } from "../src/eval/grade-instance.js";
import { packageRoot } from "../src/util/package-root.js";
import { EVAL_FIXTURES, ensureEvalImage } from "../test/helpers/eval-images.js";
import { median } from "./docker-floor.js";

const ROUNDS = Number(process.argv[2] ?? 5);

async function bareRun(docker: Docker, image: string): Promise<number> {
  const started = performance.now();
  const container = await docker.createContainer({
    Image: image,
    Cmd: ["true"],
    HostConfig: { NetworkMode: "none" },
  });
  await container.start();
  await container.wait();
  await container.remove({ force: true });
  return performance.now() - started;
}

/**
 * The demo dataset copied with images of its own (`swerun-bench-eval/<name>`), so that other checkouts
 * rebuilding the shared `swerun-demo/*` images while this runs do not add their rebuilds to the figures.
 */
function benchDemo(): string {
  const dir = mkdtempSync(join(tmpdir(), "swerun-bench-demo-"));
  cpSync(join(packageRoot(), "config", "swebench-demo"), dir, { recursive: true });
  const path = join(dir, "instances.json");
  writeFileSync(path, readFileSync(path, "utf8").replaceAll('"swerun-demo/', '"swerun-bench-eval/'));
  return path;
}

function demoBatch(dataset: string, withEval: boolean): number {
  const dir = mkdtempSync(join(tmpdir(), "swerun-bench-eval-"));
  try {
    const started = performance.now();
    const args = [
      "swebench",
      "--subset",
      dataset,
      "-c",
      "swebench",
      "-c",
      "swebench-demo",
      "--environment-class",
      "docker",
      "-w",
      "2",
      "-q",
      "-o",
      join(dir, "demo"),
      ...(withEval ? ["--eval"] : []),
    ];
    const output = execFileSync(
      process.execPath,
      ["--max-semi-space-size=4", join(packageRoot(), "dist", "src", "cli.cjs"), ...args],
      { stdio: ["ignore", "pipe", "ignore"], encoding: "utf8" },
    );
    const elapsed = performance.now() - started;
    if (!output.includes("Submitted 3") || (withEval && !output.includes("resolved: 3/3")))
      throw new Error(`the demo batch did not run as expected:\n${output}`);
    return elapsed;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const docker = await connectDocker();
try {
  const image = await ensureEvalImage(docker, (line) => process.stdout.write(`${line}\n`));
  const rows = JSON.parse(
    readFileSync(join(EVAL_FIXTURES, "dataset.json"), "utf8").replaceAll("{image}", image),
  ) as Instance[];
  const [gold] = evalInstances(
    rows.filter((row) => row.instance_id.endsWith("-gold")),
    "bench",
  );
  const prediction = JSON.parse(readFileSync(join(EVAL_FIXTURES, "preds.json"), "utf8"))[
    "swerun-test__mathx-gold"
  ];
  if (!gold) throw new Error("no gold instance in the fixtures");
  await bareRun(docker, image);
  const floors: number[] = [];
  const totals: number[] = [];
  const overheads: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    floors.push(await bareRun(docker, image));
    const out = mkdtempSync(join(tmpdir(), "swerun-bench-eval-"));
    try {
      const result = await gradeInstance({
        docker,
        instance: gold,
        prediction,
        runId: "bench",
        outputDir: out,
        timeoutSeconds: 60,
        network: "none",
      });
      if (result.status !== "resolved")
        throw new Error(`gold did not resolve: ${result.status} ${result.error ?? ""}`);
      totals.push(result.totalSeconds * 1000);
      overheads.push((result.totalSeconds - result.testSeconds) * 1000);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }
  const floor = median(floors);
  const overhead = median(overheads);
  process.stdout.write(
    `per instance (${ROUNDS} rounds, medians): bare docker run+rm ${floor.toFixed(0)} ms; swerun grading ${median(totals).toFixed(0)} ms, of which outside the eval script ${overhead.toFixed(0)} ms (${(overhead / floor).toFixed(2)}x the floor, ${(overhead - floor).toFixed(0)} ms beyond it)\n`,
  );

  const dataset = benchDemo();
  demoBatch(dataset, false);
  const plain: number[] = [];
  const graded: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    plain.push(demoBatch(dataset, false));
    graded.push(demoBatch(dataset, true));
  }
  rmSync(dirname(dataset), { recursive: true, force: true });
  const base = median(plain);
  const withEval = median(graded);
  process.stdout.write(
    `demo batch, 3 instances, -w 2 (${ROUNDS} rounds, medians): ${(base / 1000).toFixed(2)} s; with --eval ${(withEval / 1000).toFixed(2)} s (+${(((withEval - base) / base) * 100).toFixed(0)}%)\n`,
  );
} finally {
  closeDockerClient(docker);
}
