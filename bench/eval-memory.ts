/**
 * Memory of grading a large test output: swerun grades the gold instance of the test repository with an
 * eval script whose test command also prints MB megabytes of log lines (80-byte lines that are no test
 * result), in a child process of its own, and reports that process's peak resident memory (VmHWM) beyond
 * its resident memory just before the grading, against the size of the log.
 * With `--secret` a secret is registered first (as a model key is in a batch), so the output is decoded and
 * redacted on its way to the file instead of written as it came.
 * Usage: node dist/bench/eval-memory.js [MB, default 500] [--secret]
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Instance } from "../src/datasets/dataset.js";
import { closeDockerClient, connectDocker } from "../src/environments/docker/client.js";
import { evalInstances } from "../src/eval/eval-instance.js";
import { gradeInstance } from "../src/eval/grade-instance.js";
import { registerSecret } from "../src/util/secrets.js";
import { EVAL_FIXTURES, ensureEvalImage } from "../test/helpers/eval-images.js";

const MB = Number(process.argv.slice(2).find((arg) => !arg.startsWith("--")) ?? 500);
const CHILD = process.argv.includes("--child");
const SECRET = process.argv.includes("--secret");
const MIB = 1024 * 1024;

/** Resident memory now and at its peak, in bytes (Linux's /proc/self/status). */
function memory(): { rss: number; peak: number } {
  const status = readFileSync("/proc/self/status", "utf8");
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) * 1024;
  return { rss: kib("VmRSS"), peak: kib("VmHWM") };
}

/** The gold row, its test command followed by a command printing `mb` MiB of 80-byte lines. */
function bigRow(image: string, mb: number): Instance {
  const rows = JSON.parse(
    readFileSync(join(EVAL_FIXTURES, "dataset.json"), "utf8").replaceAll("{image}", image),
  ) as Instance[];
  const gold = rows.find((row) => row.instance_id.endsWith("-gold"));
  if (!gold?.eval_script) throw new Error("no gold instance in the fixtures");
  const print = `python3 -c "import sys; w = sys.stdout.buffer.write; block = (b'.' * 63 + b' progress line\\n') * 13107; [w(block) for _ in range(${mb} * 1024 * 1024 // len(block))]"`;
  const test = "python3 -m pytest -rA -p no:cacheprovider tests/test_mathx.py";
  return { ...gold, eval_script: String(gold.eval_script).replace(test, `${print}\n${test}`) };
}

async function child(): Promise<void> {
  if (SECRET) registerSecret("sk-bench-not-a-real-key-0123456789");
  const docker = await connectDocker();
  const out = mkdtempSync(join(tmpdir(), "swerun-bench-eval-memory-"));
  try {
    const image = await ensureEvalImage(docker);
    const [instance] = evalInstances([bigRow(image, MB)], "bench");
    const prediction = JSON.parse(readFileSync(join(EVAL_FIXTURES, "preds.json"), "utf8"))[
      "swerun-test__mathx-gold"
    ];
    if (!instance) throw new Error("no instance");
    const before = memory();
    const started = performance.now();
    const result = await gradeInstance({
      docker,
      instance,
      prediction,
      runId: "bench-memory",
      outputDir: out,
      timeoutSeconds: 1800,
      network: "none",
    });
    const seconds = (performance.now() - started) / 1000;
    const after = memory();
    const log = statSync(join(result.logDir, "test_output.txt")).size;
    process.stdout.write(
      `${JSON.stringify({ status: result.status, error: result.error, before: before.rss, peak: after.peak, log, seconds })}\n`,
    );
  } finally {
    rmSync(out, { recursive: true, force: true });
    closeDockerClient(docker);
  }
}

if (CHILD) await child();
else {
  const output = execFileSync(
    process.execPath,
    [
      "--max-semi-space-size=4",
      fileURLToPath(import.meta.url),
      String(MB),
      "--child",
      ...(SECRET ? ["--secret"] : []),
    ],
    { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 64 * MIB },
  );
  const figures = JSON.parse(output.trim().split("\n").at(-1) ?? "{}");
  if (figures.status !== "resolved") throw new Error(`the grading did not resolve: ${output}`);
  const beyond = figures.peak - figures.before;
  process.stdout.write(
    `grading ${(figures.log / MIB).toFixed(0)} MiB of test output${SECRET ? " (a secret registered)" : ""}: resident memory ${(figures.before / MIB).toFixed(0)} MiB before, peak ${(figures.peak / MIB).toFixed(0)} MiB (+${(beyond / MIB).toFixed(0)} MiB, ${(beyond / figures.log).toFixed(2)}x the log), ${figures.seconds.toFixed(1)} s\n`,
  );
}
