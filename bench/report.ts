/**
 * `swerun report` and `swerun export` over a synthetic batch folder (default 500 instances x 50 steps, with
 * evaluation reports for half of them): wall time and peak memory (max RSS) of each command as a child
 * process, against a floor measured in the same run: a node process that only reads and parses every
 * trajectory. Usage: node dist/bench/report.js [instances, default 500] [steps, default 50]
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../src/util/package-root.js";
import { syntheticTrajectory, writeEvalReport, writeParseFloor } from "./synthetic-run.js";

const INSTANCES = Number(process.argv[2] ?? 500);
const STEPS = Number(process.argv[3] ?? 50);
const CLI = join(packageRoot(), "dist", "src", "cli.cjs");

const OUTPUT = `${"a line of command output that goes on\n".repeat(40)}`;

function makeRunFolder(root: string): string {
  const run = join(root, "run");
  for (let index = 0; index < INSTANCES; index++) {
    const id = `owner__repo-${index + 1}`;
    mkdirSync(join(run, id), { recursive: true });
    const trajectory = syntheticTrajectory(id, {
      steps: STEPS,
      output: () => OUTPUT,
      exitStatus: "Submitted",
      submission: "diff --git a/a b/a\n",
    });
    writeFileSync(join(run, id, `${id}.traj.json`), JSON.stringify(trajectory, null, 2));
    if (index % 2 === 0) writeEvalReport(run, id, { resolved: index % 4 === 0 });
  }
  return run;
}

/** Wall seconds and max RSS (MiB) of a child process, from GNU time. */
function measure(args: string[]): { wall: number; rssMiB: number } {
  const result = spawnSync("/usr/bin/time", ["-f", "%e %M", process.execPath, ...args], {
    encoding: "utf8",
    stdio: ["ignore", "ignore", "pipe"],
  });
  if (result.status !== 0) throw new Error(`${args.join(" ")} failed: ${result.stderr}`);
  const out = result.stderr;
  const [wall, rss] = out.trim().split("\n").at(-1)?.split(" ").map(Number) ?? [];
  return { wall: wall ?? Number.NaN, rssMiB: (rss ?? Number.NaN) / 1024 };
}

function main(): void {
  const root = mkdtempSync(join(tmpdir(), "swerun-bench-report-"));
  try {
    const run = makeRunFolder(root);
    const size = INSTANCES * statSync(join(run, "owner__repo-1", "owner__repo-1.traj.json")).size;
    console.log(
      `${INSTANCES} instances x ${STEPS} steps, ${(size / 2 ** 20).toFixed(0)} MiB of trajectories`,
    );
    const floorScript = writeParseFloor(root);
    const rows: Array<[string, string[]]> = [
      ["floor: read + parse every trajectory", [floorScript, run]],
      ["report --out-dir", [CLI, "report", run, "--out-dir", join(root, "reports")]],
      [
        "export --format summary",
        [CLI, "export", run, "--format", "summary", "-o", join(root, "summary.jsonl")],
      ],
      ["export --format judge", [CLI, "export", run, "--format", "judge", "-o", join(root, "judge")]],
    ];
    let floor = 0;
    for (const [label, args] of rows) {
      const { wall, rssMiB } = measure(args);
      if (floor === 0) floor = wall;
      console.log(
        `${label.padEnd(40)} ${wall.toFixed(2)} s  (${(wall / floor).toFixed(1)}x floor)  peak ${rssMiB.toFixed(0)} MiB`,
      );
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

main();
