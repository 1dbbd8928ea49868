/**
 * Local step overhead: a bare `bash -c` spawn per action (the floor) against swerun's full step path
 * (scripted model, local environment, observation template, trajectory saved after every step),
 * over 50-, 250- and 1000-step runs whose actions each print 10 KB; medians of alternating rounds (5, 5, 3).
 * Also per run: the bytes the trajectory writer wrote against the final file's size (the writer's own count
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
  const start = performance.now();
  const result = await agent.run("bench");
  const total = performance.now() - start;
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
    actionPerStep: actions / n,
    savePerStep: saving / n,
    bytes,
    written,
    wchar: wrote,
  };
}

async function main(): Promise<void> {
  await floor(10);
  await swerun(10);
  const rows: string[] = [];
  rows.push(
    "| steps | bare bash -c (ms) | swerun step (ms) | overhead (ms) | of which: command (spawn, output) | loop (model, templates, events) | saving | step vs 50 steps | trajectory | written by the writer | wchar of the process |",
  );
  rows.push("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  let at50 = Number.NaN;
  for (const [steps, rounds] of [
    [50, ROUNDS],
    [250, ROUNDS],
    [1000, 3],
  ] as const) {
    // Floor and swerun alternate, and each column is the median: the machine's noise (another process,
    // a slow disk flush) lands on both.
    const bares: number[] = [];
    const runs: Awaited<ReturnType<typeof swerun>>[] = [];
    for (let round = 0; round < rounds; round++) {
      bares.push(await floor(steps));
      runs.push(await swerun(steps));
    }
    const bare = median(bares);
    const perStep = median(runs.map((run) => run.perStep));
    if (steps === 50) at50 = perStep;
    const action = median(runs.map((run) => run.actionPerStep));
    const saving = median(runs.map((run) => run.savePerStep));
    const cells = [bare, perStep, perStep - bare, action - bare, perStep - action - saving, saving].map(
      (ms) => ms.toFixed(2),
    );
    const bytes = median(runs.map((run) => run.bytes));
    const ratio = (value: number) => `${(value / bytes).toFixed(2)}x`;
    rows.push(
      `| ${steps} | ${cells.join(" | ")} | ${(perStep / at50).toFixed(2)}x | ${(bytes / 1e6).toFixed(1)} MB | ${ratio(median(runs.map((run) => run.written)))} | ${ratio(median(runs.map((run) => run.wchar)))} |`,
    );
  }
  process.stdout.write(`${rows.join("\n")}\n`);
}

await main();
