/**
 * Local step overhead: swerun's full step path (scripted model, local environment, observation template,
 * trajectory saved after every step) against two floors measured in the same run, alternating with it:
 * `sh -c` spawned from a small process (Python's subprocess.run, which vforks: the floor of issue 35) and
 * a bare `bash -c` spawned from Node (which forks the whole process), over 50-, 250- and 1000-step runs
 * whose actions each print 10 KB; medians and minimums of alternating rounds (5, 5, 3), the load average
 * before and after. Without python3 the small-process floor is a `/bin/sh` loop.
 * Also per run: swerun's own CPU time per step (the Node process, all its threads; not the spawner's or the
 * commands'), the bytes the trajectory writer wrote against the final file's size (the writer's own count
 * of what write(2) returned, undo journal included, and the process's `wchar` from /proc/self/io; the run's
 * timing goes into the last save, as `swerun run` does: run/timing.ts), and the time per step against the
 * 50-step run's.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent } from "../src/agent/agent.js";
import { loadConfig } from "../src/config/load.js";
import { LocalEnvironment } from "../src/environments/local.js";
import { commandRunnerKind } from "../src/environments/spawner.js";
import { EventBus } from "../src/events.js";
import { DeterministicModel } from "../src/models/deterministic.js";
import { endTiming } from "../src/run/timing.js";
import { TrajectoryWriter } from "../src/trajectory/writer.js";
import { scriptedOutputs } from "./scripted.js";

const COMMAND = "yes abcdefghi | head -c 10240";
const ROUNDS = 5;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function bareSpawn(command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", command], { stdio: ["ignore", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.on("error", reject);
    child.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

async function floor(steps: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < steps; i++) await bareSpawn(COMMAND);
  return (performance.now() - start) / steps;
}

/** Python's subprocess.run of `sh -c`, output captured, `steps` times; prints ms per step. */
const PYTHON_FLOOR = `import subprocess, sys, time
n = int(sys.argv[1]); start = time.perf_counter()
for _ in range(n): subprocess.run(["sh", "-c", sys.argv[2]], capture_output=True)
print((time.perf_counter() - start) * 1000 / n)`;

/** The same loop in /bin/sh (which vforks where it is dash), for a machine without python3. */
const SHELL_FLOOR = `n=$1; i=0; t=$(date +%s%N)
while [ $i -lt $n ]; do i=$((i + 1)); x=$(sh -c "$2"); done
echo $(( ($(date +%s%N) - t) / n ))e-6`;

let smallFloorName = "python3";

/** `sh -c` spawned from a small process, ms per step (the floor of issue 35's goal). */
function smallFloor(steps: number): Promise<number> {
  const run = (file: string, args: string[]) =>
    new Promise<number>((resolve, reject) => {
      const child = spawn(file, args, { stdio: ["ignore", "pipe", "inherit"] });
      let out = "";
      child.stdout.on("data", (chunk) => {
        out += chunk;
      });
      child.on("error", reject);
      child.on("close", (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`${file} ${code}`))));
    });
  return run("python3", ["-c", PYTHON_FLOOR, String(steps), COMMAND]).catch(() => {
    smallFloorName = "/bin/sh";
    return run("/bin/sh", ["-c", SHELL_FLOOR, "floor", String(steps), COMMAND]);
  });
}

const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

/**
 * Bytes this process's threads have passed to write(2) and its kin so far: the sum over its threads (the
 * process's own total also counts the children it has reaped, i.e. the commands' writes).
 */
const wchar = () =>
  readdirSync("/proc/self/task").reduce(
    (sum, tid) =>
      sum + Number(/^wchar: (\d+)/m.exec(readFileSync(`/proc/self/task/${tid}/io`, "latin1"))?.[1] ?? 0),
    0,
  );

async function swerun(steps: number): Promise<{
  perStep: number;
  cpuPerStep: number;
  actionPerStep: number;
  savePerStep: number;
  bytes: number;
  written: number;
  wchar: number;
}> {
  const dir = mkdtempSync(join(tmpdir(), "swerun-bench-"));
  const outputs = scriptedOutputs(COMMAND, steps);
  const config = loadConfig(["demo", "agent.step_limit=0", `environment.cwd=${dir}`]);
  config.agent.output_path = join(dir, "bench.traj.json");
  config.model.outputs = outputs;
  const bus = new EventBus();
  const agent = new Agent({
    model: new DeterministicModel(config.model),
    env: new LocalEnvironment({ ...config.environment, environment_class: "local" }),
    config: config.agent,
    bus,
    writer: new TrajectoryWriter(config.agent.output_path as string, { holdLast: true }),
  });
  let actions = 0;
  bus.subscribe((event) => {
    if (event.type === "action_end") actions += event.duration_s * 1000;
  });
  let saving = 0;
  const save = agent.save.bind(agent);
  agent.save = () => {
    const t = performance.now();
    save();
    saving += performance.now() - t;
  };
  const writtenBefore = wchar();
  const cpuBefore = process.cpuUsage();
  const start = performance.now();
  const result = await agent.run("bench");
  const total = performance.now() - start;
  const cpu = process.cpuUsage(cpuBefore);
  // As `swerun run` does: the exit message's save is held and written once with the run's timing.
  await endTiming(Date.now() - total, config.agent.output_path, (extra) =>
    (agent.trajectoryWriter as TrajectoryWriter).complete(extra),
  );
  const wrote = wchar() - writtenBefore;
  if (result.exit_status !== "Submitted")
    throw new Error(`bench run ended with ${String(result.exit_status)}`);
  const bytes = statSync(config.agent.output_path).size;
  rmSync(dir, { recursive: true, force: true });
  const n = steps + 1;
  const written = agent.trajectoryWriter?.bytesWritten ?? Number.NaN;
  return {
    perStep: total / n,
    cpuPerStep: (cpu.user + cpu.system) / 1000 / n,
    actionPerStep: actions / n,
    savePerStep: saving / n,
    bytes,
    written,
    wchar: wrote,
  };
}

const minimum = (values: number[]) => Math.min(...values);

async function main(): Promise<void> {
  const steps50 = process.argv[2] ? process.argv[2].split(",").map(Number) : [50, 250, 1000];
  await floor(10);
  await smallFloor(10);
  await swerun(10);
  const loadBefore = loadAverage();
  const rows: string[] = [];
  rows.push(
    "| steps | sh -c from a small process (ms, median / min) | bare bash -c from Node (ms) | swerun step (ms, median / min) | vs small-process floor (median / min) | swerun's CPU per step (ms, all its threads) | of which: command (spawn, output) | loop (model, templates, events) | saving | step vs 50 steps | trajectory | written by the writer | wchar of the process |",
  );
  rows.push("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  let at50 = Number.NaN;
  for (const steps of steps50) {
    const rounds = steps >= 1000 ? 3 : ROUNDS;
    // The floors and swerun alternate, and each column is the median: the machine's noise (another
    // process, a slow disk flush) lands on all of them.
    const bares: number[] = [];
    const smalls: number[] = [];
    const runs: Awaited<ReturnType<typeof swerun>>[] = [];
    for (let round = 0; round < rounds; round++) {
      smalls.push(await smallFloor(steps));
      runs.push(await swerun(steps));
      bares.push(await floor(steps));
    }
    const bare = median(bares);
    const small = median(smalls);
    const steps_ = runs.map((run) => run.perStep);
    const perStep = median(steps_);
    if (steps === 50) at50 = perStep;
    const action = median(runs.map((run) => run.actionPerStep));
    const saving = median(runs.map((run) => run.savePerStep));
    const ms = (value: number) => value.toFixed(2);
    const bytes = median(runs.map((run) => run.bytes));
    const ratio = (value: number) => `${(value / bytes).toFixed(2)}x`;
    const cells = [
      steps,
      `${ms(small)} / ${ms(minimum(smalls))}`,
      ms(bare),
      `${ms(perStep)} / ${ms(minimum(steps_))}`,
      `${(perStep / small).toFixed(2)}x / ${(minimum(steps_) / minimum(smalls)).toFixed(2)}x`,
      ms(median(runs.map((run) => run.cpuPerStep))),
      ms(action - small),
      ms(perStep - action - saving),
      ms(saving),
      `${(perStep / at50).toFixed(2)}x`,
      `${(bytes / 1e6).toFixed(1)} MB`,
      ratio(median(runs.map((run) => run.written))),
      ratio(median(runs.map((run) => run.wchar))),
    ];
    rows.push(`| ${cells.join(" | ")} |`);
  }
  process.stdout.write(`${rows.join("\n")}\n`);
  process.stdout.write(
    `small-process floor: ${smallFloorName}; command spawner: ${commandRunnerKind()}; load average before: ${loadBefore}, after: ${loadAverage()}\n`,
  );
}

await main();
