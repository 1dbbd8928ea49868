/**
 * Synthetic batch folders for the benchmarks of readers of runs (`swerun report`, `export`, `view`): trajectories
 * built from the recorded swerun fixture, harness-shaped evaluation reports, and the floor every such bench
 * measures against (a node process that only reads and parses every trajectory).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../src/util/package-root.js";

export interface SyntheticTrajectory {
  steps: number;
  /** The output of step `step` (from 1). */
  output: (step: number) => string;
  /** More fields of each model message's `extra` (cost, usage). */
  modelExtra?: (step: number) => Record<string, unknown>;
  exitStatus: string;
  submission: string;
}

/** One instance's trajectory: `steps` tool-call turns (a grep or a sed each), then the exit message. */
export function syntheticTrajectory(id: string, options: SyntheticTrajectory): Record<string, unknown> {
  const source = JSON.parse(
    readFileSync(join(packageRoot(), "test", "fixtures", "report", "swerun-full.traj.json"), "utf8"),
  );
  const [system, user, assistant, tool] = source.messages as Array<Record<string, unknown>>;
  const messages: unknown[] = [
    system,
    { ...user, content: `Problem statement of ${id}\n${"text ".repeat(600)}` },
  ];
  for (let step = 1; step <= options.steps; step++) {
    const callId = `call_${step}`;
    const command =
      step % 3 === 0 ? `cd /testbed && grep -rn 'def f${step}' src | head -20` : `sed -n '${step},+40p' a.py`;
    const output = options.output(step);
    messages.push(
      {
        ...assistant,
        content: `Step ${step}: I look at the next part of the code around f${step}.`,
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
          ...options.modelExtra?.(step),
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
    content: options.submission,
    extra: { exit_status: options.exitStatus, submission: options.submission },
  });
  return { ...source, messages, instance_id: id };
}

/** Writes `<run>/eval/bench/<id>/report.json` in the SWE-bench harness's shape. */
export function writeEvalReport(
  run: string,
  id: string,
  record: { resolved: boolean; [key: string]: unknown },
): void {
  mkdirSync(join(run, "eval", "bench", id), { recursive: true });
  writeFileSync(join(run, "eval", "bench", id, "report.json"), JSON.stringify({ [id]: record }));
}

/** Writes the floor script into `root` and returns its path: `node <it> <run>` reads and parses every trajectory. */
export function writeParseFloor(root: string): string {
  const script = join(root, "floor.mjs");
  writeFileSync(
    script,
    `import { readdirSync, readFileSync } from "node:fs";\nlet n = 0;\nfor (const e of readdirSync(process.argv[2], { withFileTypes: true, recursive: true }))\n  if (e.name.endsWith(".traj.json")) n += JSON.parse(readFileSync(e.parentPath + "/" + e.name, "utf8")).messages.length;\nconsole.log(n);\n`,
  );
  return script;
}
