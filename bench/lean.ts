/**
 * Start and memory (`npm run bench`, `node dist/bench/lean.js [rounds]`): swerun as a user runs it (the built
 * bin, through its shebang), against floors measured in the same run, interleaved, medians:
 * - start: `swerun --help` and a 0-step local run (the scripted model submits at once; one command runs)
 *   against `node -e 0`, median and minimum of the rounds, with the load average before and after;
 * - memory: the peak, over a 250-step local run (each action prints 10 KB), of the sum over every process of
 *   the run's tree (swerun, its command runner, the commands) of PSS and of RSS, sampled every 20 ms.
 * With mini-swe-agent installed (`SWERUN_BENCH_MINI=<path of its mini>`, see /work/shared/reference/README.md)
 * the same runs of mini-swe-agent 2.4.6 are measured side by side, on its own text-based config; with
 * `SWERUN_BENCH_BASELINE=<another build's bin, dist/src/cli.cjs (dist/src/cli.js before)>` (e.g. main's), that build too.
 */
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { packageRoot } from "../src/util/package-root.js";
import { scriptedOutputs } from "./scripted.js";

const ROUNDS = Number(process.argv[2] ?? 11);
const CLI = join(packageRoot(), "dist", "src", "cli.cjs");
const MINI = process.env.SWERUN_BENCH_MINI;
const COMMAND = "yes abcdefghi | head -c 10240";

const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Every descendant of `root` (and itself), from /proc. */
function tree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const list = children.get(parent) ?? [];
      list.push(Number(name));
      children.set(parent, list);
    } catch {}
  }
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.pop() as number;
    found.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

/** Sum of PSS and of RSS (KiB) over the processes. */
function memory(pids: number[]): { pss: number; rss: number } {
  let pss = 0;
  let rss = 0;
  for (const pid of pids) {
    try {
      const text = readFileSync(`/proc/${pid}/smaps_rollup`, "latin1");
      pss += Number(/^Pss:\s+(\d+)/m.exec(text)?.[1] ?? 0);
      rss += Number(/^Rss:\s+(\d+)/m.exec(text)?.[1] ?? 0);
    } catch {}
  }
  return { pss, rss };
}

interface Measured {
  ms: number;
  pss: number;
  rss: number;
}

/** Runs the command to its end; with `sample`, the peak memory of its process tree. */
function measure(file: string, args: string[], env: NodeJS.ProcessEnv, sample = false): Promise<Measured> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const child = spawn(file, args, { stdio: ["ignore", "ignore", "pipe"], env });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    let peak = { pss: 0, rss: 0 };
    const timer = sample
      ? setInterval(() => {
          const now = memory(tree(child.pid as number));
          peak = { pss: Math.max(peak.pss, now.pss), rss: Math.max(peak.rss, now.rss) };
        }, 20)
      : undefined;
    child.on("error", reject);
    child.on("close", (code) => {
      clearInterval(timer);
      if (code !== 0) reject(new Error(`${file} ${args.join(" ")} exited ${code}: ${stderr.slice(-1500)}`));
      else resolve({ ms: performance.now() - start, pss: peak.pss / 1024, rss: peak.rss / 1024 });
    });
  });
}

interface Tool {
  name: string;
  run: (config: string, out: string, sample?: boolean) => Promise<Measured>;
  help: () => Promise<Measured>;
}

function tools(dir: string): Tool[] {
  const env = { ...process.env, NO_COLOR: "1" };
  const list: Tool[] = [
    {
      name: "swerun",
      run: (config, out, sample) =>
        measure(
          CLI,
          ["run", "-c", "textbased", "-c", config, "-t", "x", "-y", "--exit-immediately", "-o", out],
          env,
          sample,
        ),
      help: () => measure(CLI, ["--help"], env),
    },
  ];
  const baseline = process.env.SWERUN_BENCH_BASELINE;
  if (baseline) {
    list.push({
      name: "swerun (baseline build)",
      run: (config, out, sample) =>
        measure(
          baseline,
          ["run", "-c", "textbased", "-c", config, "-t", "x", "-y", "--exit-immediately", "-o", out],
          env,
          sample,
        ),
      help: () => measure(baseline, ["--help"], env),
    });
  }
  if (MINI) {
    const miniEnv = {
      ...env,
      MSWEA_SILENT_STARTUP: "1",
      MSWEA_CONFIGURED: "1",
      MSWEA_GLOBAL_CONFIG_DIR: join(dir, "mswea"),
    };
    const textbased = join(
      dirname(dirname(MINI)),
      "..",
      "mini-swe-agent-2.4.6",
      "src",
      "minisweagent",
      "config",
    );
    const base = existsSync(textbased) ? join(textbased, "mini_textbased.yaml") : "mini_textbased.yaml";
    list.push({
      name: "mini-swe-agent 2.4.6",
      run: (config, out, sample) =>
        measure(
          MINI,
          ["-c", base, "-c", config, "-t", "x", "-y", "--exit-immediately", "-o", out],
          miniEnv,
          sample,
        ),
      help: () => measure(MINI, ["--help"], miniEnv),
    });
  }
  return list;
}

/** A config file (JSON, named .yaml for mini-swe-agent) whose scripted model runs `steps` actions, then submits. */
function config(dir: string, steps: number): string {
  const work = join(dir, `work-${steps}`);
  mkdirSync(work, { recursive: true });
  const path = join(dir, `steps-${steps}.yaml`);
  const outputs = scriptedOutputs(COMMAND, steps);
  writeFileSync(
    path,
    JSON.stringify({
      agent: { step_limit: 0, cost_limit: 0 },
      environment: { cwd: work },
      model: { model_class: "deterministic", model_name: "deterministic", outputs },
    }),
  );
  return path;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "swerun-bench-lean-"));
  const list = tools(dir);
  const zero = config(dir, 0);
  const long = config(dir, 250);
  const out = (name: string) => join(dir, `${name.replace(/\W/g, "")}.traj.json`);
  const floor = () => measure(process.execPath, ["-e", "0"], process.env);
  // Warm-up: the page cache holds every file each tool reads.
  await floor();
  for (const tool of list) {
    await tool.help();
    await tool.run(zero, out(tool.name));
  }
  const loadBefore = loadAverage();
  const starts = {
    floor: [] as number[],
    help: list.map(() => [] as number[]),
    zero: list.map(() => [] as number[]),
  };
  for (let round = 0; round < ROUNDS; round++) {
    starts.floor.push((await floor()).ms);
    for (const [index, tool] of list.entries()) {
      starts.help[index]?.push((await tool.help()).ms);
      starts.zero[index]?.push((await tool.run(zero, out(tool.name))).ms);
    }
  }
  const base = median(starts.floor);
  const least = Math.min(...starts.floor);
  const rows = [
    "| start | wall (ms), median / min | vs `node -e 0`, median / min |",
    "| :--- | ---: | ---: |",
  ];
  rows.push(`| \`node -e 0\` (floor) | ${base.toFixed(0)} / ${least.toFixed(0)} | 1.00x / 1.00x |`);
  const cell = (values: number[]) => {
    const [middle, low] = [median(values), Math.min(...values)];
    return `${middle.toFixed(0)} / ${low.toFixed(0)} | ${(middle / base).toFixed(2)}x / ${(low / least).toFixed(2)}x`;
  };
  for (const [index, tool] of list.entries()) {
    rows.push(`| ${tool.name} \`--help\` | ${cell(starts.help[index] ?? [])} |`);
    rows.push(`| ${tool.name} 0-step local run | ${cell(starts.zero[index] ?? [])} |`);
  }
  rows.push("", `load average before: ${loadBefore}, after the start rounds: ${loadAverage()}`);
  process.stdout.write(`${rows.join("\n")}\n\n`);

  const memoryRounds = Math.max(1, Math.ceil(ROUNDS / 4));
  const peaks = list.map(() => [] as Measured[]);
  for (let round = 0; round < memoryRounds; round++) {
    for (const [index, tool] of list.entries())
      peaks[index]?.push(await tool.run(long, out(tool.name), true));
  }
  // The floor of the memory figures is mini-swe-agent's own, when it is there.
  const table = [
    "| 250-step local run | wall (s) | peak PSS, whole tree (MiB) | vs mini-swe-agent | peak RSS, whole tree (MiB) | vs mini-swe-agent |",
    "| :--- | ---: | ---: | ---: | ---: | ---: |",
  ];
  const floorRuns = peaks[list.length - 1] ?? [];
  const floorPss = MINI ? median(floorRuns.map((run) => run.pss)) : Number.NaN;
  const floorRss = MINI ? median(floorRuns.map((run) => run.rss)) : Number.NaN;
  const versus = (value: number, floor: number) =>
    Number.isNaN(floor) ? "–" : `${(value / floor).toFixed(2)}x`;
  for (const [index, tool] of list.entries()) {
    const runs = peaks[index] ?? [];
    const pss = median(runs.map((run) => run.pss));
    const rss = median(runs.map((run) => run.rss));
    const cells = [
      (median(runs.map((run) => run.ms)) / 1000).toFixed(2),
      pss.toFixed(1),
      versus(pss, floorPss),
      rss.toFixed(1),
      versus(rss, floorRss),
    ];
    table.push(`| ${tool.name} | ${cells.join(" | ")} |`);
  }
  process.stdout.write(`${table.join("\n")}\nload average at the end: ${loadAverage()}\n`);
  rmSync(dir, { recursive: true, force: true });
}

await main();
