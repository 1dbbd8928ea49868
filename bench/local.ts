/**
 * Local step overhead: a bare `bash -c` spawn per action (the floor) against swerun's full step path
 * (scripted model, local environment, observation template, trajectory saved after every step),
 * over 50- and 250-step runs whose actions each print 10 KB; medians of 5 alternating rounds.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent } from "../src/agent/agent.js";
import { loadConfig } from "../src/config/load.js";
import { LocalEnvironment } from "../src/environments/local.js";
import { EventBus } from "../src/events.js";
import { DeterministicModel } from "../src/models/deterministic.js";
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

async function swerun(
  steps: number,
): Promise<{ perStep: number; actionPerStep: number; savePerStep: number; bytes: number }> {
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
  const start = performance.now();
  const result = await agent.run("bench");
  const total = performance.now() - start;
  if (result.exit_status !== "Submitted")
    throw new Error(`bench run ended with ${String(result.exit_status)}`);
  const bytes = statSync(config.agent.output_path).size;
  rmSync(dir, { recursive: true, force: true });
  const n = steps + 1;
  return { perStep: total / n, actionPerStep: actions / n, savePerStep: saving / n, bytes };
}

async function main(): Promise<void> {
  await floor(10);
  await swerun(10);
  const rows: string[] = [];
  rows.push(
    "| steps | bare bash -c (ms) | swerun step (ms) | overhead (ms) | of which: command runner | loop (model, templates, events) | saving | trajectory |",
  );
  rows.push("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
  for (const steps of [50, 250]) {
    // Floor and swerun alternate, ROUNDS times each, and each column is the median: the machine's noise
    // (another process, a slow disk flush) lands on both.
    const bares: number[] = [];
    const runs: Awaited<ReturnType<typeof swerun>>[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      bares.push(await floor(steps));
      runs.push(await swerun(steps));
    }
    const bare = median(bares);
    const perStep = median(runs.map((run) => run.perStep));
    const action = median(runs.map((run) => run.actionPerStep));
    const saving = median(runs.map((run) => run.savePerStep));
    const cells = [bare, perStep, perStep - bare, action - bare, perStep - action - saving, saving].map(
      (ms) => ms.toFixed(2),
    );
    rows.push(`| ${steps} | ${cells.join(" | ")} | ${((runs[0]?.bytes ?? 0) / 1e6).toFixed(1)} MB |`);
  }
  process.stdout.write(`${rows.join("\n")}\n`);
}

await main();
