/**
 * `swerun report` and `swerun export` over a synthetic batch folder (default 500 instances x 50 steps, with
 * evaluation reports for half of them): wall time and peak memory (max RSS) of each command as a child
 * process, against a floor measured in the same run: a node process that only reads and parses every
 * trajectory. Usage: node dist/bench/report.js [instances, default 500] [steps, default 50]
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../src/util/package-root.js";

const INSTANCES = Number(process.argv[2] ?? 500);
const STEPS = Number(process.argv[3] ?? 50);
const CLI = join(packageRoot(), "dist", "src", "cli.js");

/** One instance's trajectory: `STEPS` tool-call turns with ~1.5 KB outputs, then a submission. */
function trajectory(id: string): string {
  const source = JSON.parse(
    readFileSync(join(packageRoot(), "test", "fixtures", "report", "swerun-full.traj.json"), "utf8"),
  );
  const [system, user, assistant, tool] = source.messages as Array<Record<string, unknown>>;
  const messages: unknown[] = [
    system,
    { ...user, content: `Problem statement of ${id}\n${"text ".repeat(600)}` },
  ];
  const output = `${"a line of command output that goes on\n".repeat(40)}`;
  for (let step = 1; step <= STEPS; step++) {
    const callId = `call_${step}`;
    const command =
      step % 3 === 0 ? `cd /testbed && grep -rn 'def f${step}' src | head -20` : `sed -n '${step},+40p' a.py`;
    messages.push(
      {
        ...assistant,
        content: `Step ${step}: I look at the next part of the code.`,
        tool_calls: [
          {
            id: callId,
            type: "function",
            function: { name: "bash", arguments: JSON.stringify({ command }) },
          },
        ],
        extra: {
          ...(assistant?.extra as object),
          actions: [{ command, tool_call_id: callId }],
          timestamp: 1_700_000_000 + step,
        },
      },
      {
        ...tool,
        tool_call_id: callId,
        content: `<returncode>0</returncode>\n<output>\n${output}</output>`,
        extra: {
          raw_output: output,
          returncode: 0,
          exception_info: "",
          duration_s: 0.05,
          timestamp: 1_700_000_000.5 + step,
        },
      },
    );
  }
  messages.push({
    role: "exit",
    content: "diff",
    extra: { exit_status: "Submitted", submission: "diff --git a/a b/a\n" },
  });
  return JSON.stringify({ ...source, messages, instance_id: id }, null, 2);
}

function makeRunFolder(root: string): string {
  const run = join(root, "run");
  for (let index = 0; index < INSTANCES; index++) {
    const id = `owner__repo-${index + 1}`;
    mkdirSync(join(run, id), { recursive: true });
    writeFileSync(join(run, id, `${id}.traj.json`), trajectory(id));
    if (index % 2 === 0) {
      mkdirSync(join(run, "eval", "bench", id), { recursive: true });
      writeFileSync(
        join(run, "eval", "bench", id, "report.json"),
        JSON.stringify({ [id]: { resolved: index % 4 === 0 } }),
      );
    }
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
    const floorScript = join(root, "floor.mjs");
    writeFileSync(
      floorScript,
      `import { readdirSync, readFileSync } from "node:fs";\nlet n = 0;\nfor (const e of readdirSync(process.argv[2], { withFileTypes: true, recursive: true }))\n  if (e.name.endsWith(".traj.json")) n += JSON.parse(readFileSync(e.parentPath + "/" + e.name, "utf8")).messages.length;\nconsole.log(n);\n`,
    );
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
