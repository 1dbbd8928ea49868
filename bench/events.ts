/**
 * Event stream overhead: the same scripted local run (each action prints 10 KB) with events off and with
 * `--events` on (every agent event mapped to SwarmSDK-shaped lines appended to a file), alternating
 * rounds, medians. Also the time spent inside the event listener, measured in the run itself.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent } from "../src/agent/agent.js";
import { loadConfig } from "../src/config/load.js";
import { LocalEnvironment } from "../src/environments/local.js";
import { EventBus } from "../src/events.js";
import { DeterministicModel } from "../src/models/deterministic.js";
import { describeModel } from "../src/models/model-facts.js";
import { SwarmEventStream } from "../src/run/swarm-events.js";
import { JsonlSink } from "../src/util/jsonl-sink.js";
import { scriptedOutputs } from "./scripted.js";

const COMMAND = "yes abcdefghi | head -c 10240";
const STEPS = 100;
const ROUNDS = 5;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function run(events: boolean): Promise<{ perStep: number; listenerPerStep: number; lines: number }> {
  const dir = mkdtempSync(join(tmpdir(), "swerun-bench-events-"));
  const config = loadConfig(["demo", "agent.step_limit=0", `environment.cwd=${dir}`]);
  config.agent.output_path = join(dir, "bench.traj.json");
  config.model.outputs = scriptedOutputs(COMMAND, STEPS);
  const bus = new EventBus();
  let listening = 0;
  let sink: JsonlSink | undefined;
  if (events) {
    sink = new JsonlSink(join(dir, "events.jsonl"));
    const stream = new SwarmEventStream({
      sink,
      swarmId: "main",
      executionId: "bench",
      models: [await describeModel(config.model)],
    });
    stream.start("bench");
    bus.subscribe((event) => {
      const t = performance.now();
      stream.listener(event);
      listening += performance.now() - t;
    });
  }
  const agent = new Agent({
    model: new DeterministicModel(config.model),
    env: new LocalEnvironment({ ...config.environment, environment_class: "local" }),
    config: config.agent,
    bus,
  });
  const start = performance.now();
  const result = await agent.run("bench");
  const total = performance.now() - start;
  if (result.exit_status !== "Submitted")
    throw new Error(`bench run ended with ${String(result.exit_status)}`);
  sink?.close();
  const lines = events ? statSync(join(dir, "events.jsonl")).size : 0;
  rmSync(dir, { recursive: true, force: true });
  const n = STEPS + 1;
  return { perStep: total / n, listenerPerStep: listening / n, lines };
}

async function main(): Promise<void> {
  await run(false);
  await run(true);
  const off: number[] = [];
  const on: number[] = [];
  const inside: number[] = [];
  let bytes = 0;
  for (let round = 0; round < ROUNDS; round++) {
    off.push((await run(false)).perStep);
    const measured = await run(true);
    on.push(measured.perStep);
    inside.push(measured.listenerPerStep);
    bytes = measured.lines;
  }
  const [a, b, c] = [median(off), median(on), median(inside)];
  const rows = [
    "| steps | events off (ms/step) | events on (ms/step) | difference (ms/step) | listener, same run (ms/step) | listener share of the step | event file |",
    "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    `| ${STEPS} | ${a.toFixed(3)} | ${b.toFixed(3)} | ${(b - a).toFixed(3)} | ${c.toFixed(3)} | ${((c / b) * 100).toFixed(2)}% | ${(bytes / 1e6).toFixed(2)} MB |`,
  ];
  process.stdout.write(`${rows.join("\n")}\n`);
}

await main();
