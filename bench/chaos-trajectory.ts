/**
 * Trajectory chaos (`npm run chaos:trajectory`, `node dist/bench/chaos-trajectory.js [kills] [steps]`): local
 * runs of `steps` scripted steps (each prints 10 KB) SIGKILLed at a random moment of the run, `kills` times.
 * While each runs, a reader polls the trajectory (as `tail`-style watchers and mini-swe-agent's readers do)
 * and remembers the most messages it saw. After each kill the file must parse, hold every message the reader
 * saw before the kill (and at most one step more than it could), and its messages must be a prefix of a
 * complete run's; a file a kill cut inside a step is repaired from its undo journal as swerun's readers do. Prints the counts; exits 1 if a file was unreadable or lost a step.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repairTrajectory } from "../src/trajectory/journal.js";
import { packageRoot } from "../src/util/package-root.js";
import { scriptedOutputs } from "./scripted.js";

const KILLS = Number(process.argv[2] ?? 30);
const STEPS = Number(process.argv[3] ?? 200);
const CLI = join(packageRoot(), "dist", "src", "cli.cjs");

function run(dir: string, out: string): { done: Promise<number | null>; kill: () => void } {
  const config = join(dir, "config.json");
  writeFileSync(
    config,
    JSON.stringify({
      agent: { step_limit: 0, cost_limit: 0 },
      environment: { cwd: dir },
      model: {
        model_class: "deterministic",
        model_name: "deterministic",
        outputs: scriptedOutputs("yes abcdefghi | head -c 10240", STEPS),
      },
    }),
  );
  const args = ["run", "-c", "textbased", "-c", config, "-t", "x", "-y", "--exit-immediately", "-o", out];
  const child = spawn(CLI, args, { stdio: "ignore" });
  return {
    done: new Promise((resolve) => child.on("close", (code) => resolve(code))),
    kill: () => child.kill("SIGKILL"),
  };
}

/** The messages of the trajectory, or undefined when it is missing or does not parse. */
function read(path: string): Array<{ role: string; content: unknown }> | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")).messages;
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "swerun-chaos-trajectory-"));
  const reference = join(dir, "complete.traj.json");
  const start = Date.now();
  if ((await run(dir, reference).done) !== 0) throw new Error("the complete run failed");
  const fullRun = Date.now() - start;
  const complete = read(reference) ?? [];
  const counts = {
    kills: 0,
    "reads during runs": 0,
    "reads that did not parse (a reader caught a write)": 0,
    "kills before the first save": 0,
    "files cut inside a step, repaired from the undo journal": 0,
    "files that did not parse after a kill (and repair)": 0,
    "files missing a step a reader had seen": 0,
    "files whose messages differ from a complete run's": 0,
    "steps on disk after a kill (median)": 0,
  };
  const onDisk: number[] = [];
  for (let kill = 0; kill < KILLS; kill++) {
    const out = join(dir, `killed-${kill}.traj.json`);
    const attempt = run(dir, out);
    let seen = 0;
    let reading = true;
    const reader = (async () => {
      while (reading) {
        if (existsSync(out)) {
          counts["reads during runs"] += 1;
          const messages = read(out);
          if (messages === undefined) counts["reads that did not parse (a reader caught a write)"] += 1;
          else seen = Math.max(seen, messages.length);
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, Math.random() * fullRun));
    const seenBeforeKill = seen;
    attempt.kill();
    await attempt.done;
    reading = false;
    await reader;
    counts.kills += 1;
    if (!existsSync(out)) {
      counts["kills before the first save"] += 1;
      continue;
    }
    if (read(out) === undefined && repairTrajectory(out))
      counts["files cut inside a step, repaired from the undo journal"] += 1;
    const messages = read(out);
    if (messages === undefined) {
      counts["files that did not parse after a kill (and repair)"] += 1;
      continue;
    }
    onDisk.push((messages.length - 2) / 2);
    if (messages.length < seenBeforeKill) counts["files missing a step a reader had seen"] += 1;
    if (
      JSON.stringify(messages.map((m) => m.content)) !==
      JSON.stringify(complete.slice(0, messages.length).map((m) => m.content))
    )
      counts["files whose messages differ from a complete run's"] += 1;
  }
  onDisk.sort((a, b) => a - b);
  counts["steps on disk after a kill (median)"] = onDisk[Math.floor(onDisk.length / 2)] ?? 0;
  process.stdout.write(
    `trajectory chaos: ${STEPS}-step local runs (10 KB per step), killed uniformly within one run (${(fullRun / 1000).toFixed(1)} s)\n`,
  );
  const width = Math.max(...Object.keys(counts).map((key) => key.length));
  for (const [key, value] of Object.entries(counts)) process.stdout.write(`${key.padEnd(width)}  ${value}\n`);
  rmSync(dir, { recursive: true, force: true });
  const failures =
    counts["files that did not parse after a kill (and repair)"] +
    counts["files missing a step a reader had seen"] +
    counts["files whose messages differ from a complete run's"];
  process.exitCode = failures > 0 ? 1 : 0;
}

await main();
