/**
 * The long chaos run (`npm run chaos`): Docker batches of scripted instances SIGKILLed at random moments
 * (up to 4 kills per batch, each within the time of a whole run) and resumed until they finish, on fresh
 * folders, until `kills` kills have landed. After every kill it records what the crash left (preds.json
 * behind the trajectories, containers, temp files); after each batch finishes it checks that every
 * instance is in preds.json exactly once with its trajectory's patch, that no finished instance ran
 * again, and that no container or temp file is left. Prints the counts; exits 1 if a check failed.
 * Needs a Docker daemon (the calc fixture image is built on first use, offline).
 * With `--eval` the batches grade each instance (`swebench --eval`), with `--events` they write an event
 * log; then it also checks that every submitted instance has exactly one verdict in run.json, equal to its
 * report.json, and that every event line is JSON. `--trials N` runs N randomly killed batches (instead of
 * counting kills); `--points` (implied by `--eval`) then kills one batch at each chaos point
 * (src/util/chaos.ts) and resumes it. `--full-disk` (root: it mounts a tmpfs per batch) fills the disk of the
 * batch's folder instead of killing: each trial runs a fresh batch, then `--redo-existing` over its finished
 * trajectories, each with the disk filled to a few KiB at a random moment (bench/chaos-disk.ts checks what
 * the run left: no finished trajectory lost or cut, the failing file named, no raw error, no copy in the
 * temp folder, no leftover file), then frees the disk and resumes until the batch finishes (the usual end
 * checks, and no finished instance run again).
 * Usage: node dist/bench/chaos.js [kills, default 50] [instances per batch, default 8] [workers, default 2]
 *        [--eval] [--events] [--trials N] [--points] [--full-disk]
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Docker from "dockerode";
import { closeDockerClient, connectDocker } from "../src/environments/docker/client.js";
import { CONTAINER_LABELS } from "../src/environments/docker/container-labels.js";
import { packageRoot } from "../src/util/package-root.js";
import { diskFindings, mountSmallDisk, statusOf, trajectoryBytes } from "./chaos-disk.js";

const argv = process.argv.slice(2);
const trialsAt = argv.indexOf("--trials");
const TRIALS = trialsAt >= 0 ? Number(argv[trialsAt + 1]) : undefined;
const positional = argv.filter((arg, i) => !arg.startsWith("--") && (trialsAt < 0 || i !== trialsAt + 1));
const KILLS = Number(positional[0] ?? 50);
const INSTANCES = Number(positional[1] ?? 8);
const WORKERS = Number(positional[2] ?? 2);
const EVAL = argv.includes("--eval");
const EVENTS = argv.includes("--events");
const POINTS = EVAL || argv.includes("--points");
const FULL_DISK = argv.includes("--full-disk");
const CHAOS_POINTS = [
  "run-recorded",
  "container-created",
  "action-start",
  "atomic-rename",
  "trajectory-renamed",
  ...(EVAL ? ["grading-tests", "grading-ended"] : []),
];
const KILLS_PER_BATCH = 4;
const CLI = join(packageRoot(), "dist", "src", "cli.cjs");

const step = (command: string) => ({
  role: "assistant",
  content: command,
  extra: { actions: [{ command }], cost: 0 },
});

/** The grading columns of the demo's calc instance (the same fixture and image). */
function calcGrading(): Record<string, unknown> {
  const demo = readJson(join(packageRoot(), "config", "swebench-demo", "instances.json")) as Array<
    Record<string, unknown>
  >;
  const calc = demo.find((row) => row.fixture === "calc") ?? {};
  const keys = ["eval_script", "log_parser", "eval_type", "FAIL_TO_PASS", "PASS_TO_PASS"];
  return Object.fromEntries(keys.map((key) => [key, calc[key]]));
}

function writeDataset(dir: string): string[] {
  cpSync(join(packageRoot(), "config", "swebench-demo", "calc"), join(dir, "calc"), { recursive: true });
  const grading = EVAL ? calcGrading() : {};
  const ids = Array.from({ length: INSTANCES }, (_, i) => `chaos__calc-${i + 1}`);
  const instances = ids.map((instance_id) => ({
    instance_id,
    problem_statement: "add subtracts",
    fixture: "calc",
    image_name: "swerun-demo/calc:latest",
    swerun_scripted_outputs: [
      step("sleep 0.2"),
      step("sed -i 's/\\$1 - \\$2/$1 + $2/' calc.sh && bash test.sh"),
      step("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"),
    ],
    ...grading,
  }));
  writeFileSync(join(dir, "dataset.json"), JSON.stringify(instances));
  return ids;
}

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

function run(
  args: string[],
  pause?: string,
): { child: ChildProcess; done: Promise<Ended & { pid: number }> } {
  const child = spawn(process.execPath, [CLI, ...args], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, NO_COLOR: "1", ...(pause ? { SWERUN_CHAOS_PAUSE: pause } : {}) },
  });
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
    // Stopped at the chaos point asked for: killed exactly there.
    if (pause && stderr.includes(`swerun chaos: paused at ${pause} `)) child.kill("SIGKILL");
  });
  const pid = child.pid as number;
  return {
    child,
    done: new Promise((resolve) =>
      child.on("close", (code, signal) => resolve({ code, signal, stderr, pid })),
    ),
  };
}

/** Finished trajectories of the folder: id -> [exit status, patch, mtime]. */
function trajectories(out: string): Map<string, { status: string; patch: string; mtime: number }> {
  const found = new Map<string, { status: string; patch: string; mtime: number }>();
  if (!existsSync(out)) return found;
  for (const id of readdirSync(out)) {
    const path = join(out, id, `${id}.traj.json`);
    if (!existsSync(path)) continue;
    const info = readJson(path).info;
    found.set(id, { status: info.exit_status, patch: info.submission, mtime: statSync(path).mtimeMs });
  }
  return found;
}

const leftoverFiles = (out: string) =>
  existsSync(out)
    ? readdirSync(out, { recursive: true }).filter((name) => /\.tmp$/.test(String(name))).length
    : 0;

async function containersOf(docker: Docker, runId: string): Promise<Docker.ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: { label: [`${CONTAINER_LABELS.runId}=${runId}`] } });
}

const counts = {
  batches: 0,
  runs: 0,
  kills: 0,
  "kills that left preds.json behind a trajectory": 0,
  "kills that left a Created container": 0,
  "kills that left a running container": 0,
  "kills that left a temp file": 0,
  "kills that left an unparsable preds.json": 0,
  "preds.json entries restored at a start": 0,
  "containers removed at a start": 0,
  "temp files removed at a start": 0,
  "lost or wrong preds.json entries": 0,
  "finished instances run again": 0,
  "containers left at the end": 0,
  "temp, partial or undo files left at the end": 0,
  "submitted instances without exactly one verdict equal to report.json (--eval)": 0,
  "event lines that are not JSON (--events)": 0,
  "full disks that landed during a run (--full-disk)": 0,
  "runs stopped by a full disk, exit 1 naming the file": 0,
  "runs not saved, said on the console": 0,
  "finished trajectories lost or cut by a full disk": 0,
  "trajectories that do not parse after a full disk": 0,
  "exits that name no file, raw system errors": 0,
  "trajectory copies in the temp folder": 0,
  "temp, partial, undo or lock files left after a full disk": 0,
  "random trials that held": 0,
  "random trials": 0,
  "chaos points that held": 0,
  "chaos points": 0,
};

/** The failures a finished batch's folder shows (eval verdicts, event lines), counted. */
function evalFailures(dir: string, out: string): number {
  let failures = 0;
  if (EVAL) {
    const preds = readJson(join(out, "preds.json")) as Record<
      string,
      { model_patch: string; model_name_or_path: string }
    >;
    const run = readJson(join(out, "run.json"));
    const verdicts = (run.eval?.instances ?? {}) as Record<string, { resolved: boolean; status: string }>;
    for (const [id, pred] of Object.entries(preds)) {
      if (!pred.model_patch) continue;
      const model = pred.model_name_or_path.replaceAll("/", "__");
      const path = join(out, "eval", "logs", "run_evaluation", "out", model, id, "report.json");
      const report = existsSync(path) ? readJson(path)[id] : undefined;
      const verdict = verdicts[id];
      if (
        !report ||
        !verdict ||
        verdict.resolved !== report.resolved ||
        verdict.status !== (report.resolved ? "resolved" : "unresolved")
      )
        failures += 1;
    }
    counts["submitted instances without exactly one verdict equal to report.json (--eval)"] += failures;
  }
  if (EVENTS) {
    const path = join(dir, "events.jsonl");
    const lines = existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];
    let bad = 0;
    for (const line of lines) {
      try {
        JSON.parse(line);
      } catch {
        bad += 1;
      }
    }
    counts["event lines that are not JSON (--events)"] += bad;
    failures += bad;
  }
  return failures;
}

/** Everything counted that must stay 0. */
function failureCount(): number {
  return (
    counts["lost or wrong preds.json entries"] +
    counts["finished instances run again"] +
    counts["containers left at the end"] +
    counts["temp, partial or undo files left at the end"] +
    counts["kills that left an unparsable preds.json"] +
    counts["submitted instances without exactly one verdict equal to report.json (--eval)"] +
    counts["event lines that are not JSON (--events)"] +
    counts["finished trajectories lost or cut by a full disk"] +
    counts["trajectories that do not parse after a full disk"] +
    counts["exits that name no file, raw system errors"] +
    counts["trajectory copies in the temp folder"] +
    counts["temp, partial, undo or lock files left after a full disk"]
  );
}

function batchArgs(dir: string, extra: string[], out = join(dir, "out")): string[] {
  return [
    ...["swebench", "--subset", join(dir, "dataset.json"), "--environment-class", "docker"],
    ...["-w", String(WORKERS), "-o", out, "-c", "swebench", "-c", "swebench-demo"],
    ...["-c", 'environment.run_args=["--rm","--network","none"]', ...extra],
    ...(EVAL ? ["--eval"] : []),
    ...(EVENTS ? ["--events", join(dir, "events.jsonl")] : []),
  ];
}

async function main(): Promise<void> {
  const docker = await connectDocker();
  const started = Date.now();
  // Two unhindered batches (the first builds the fixture image): the second's time is a whole run.
  let fullRun = 0;
  for (let i = 0; i < 2; i++) {
    const dir = mkdtempSync(join(tmpdir(), "swerun-chaos-"));
    writeDataset(dir);
    const begin = Date.now();
    const result = await run(batchArgs(dir, [])).done;
    if (result.code !== 0) throw new Error(`the calibration run failed: ${result.stderr.slice(-2000)}`);
    fullRun = Date.now() - begin;
    rmSync(dir, { recursive: true, force: true });
  }
  const counted = new Set<string>();
  /** One batch to its end: killed at random (or once at `pause`), resumed each time. Returns its failures. */
  const trial = async (pause?: string): Promise<number> => {
    const failuresBefore = failureCount();
    {
      const dir = mkdtempSync(join(tmpdir(), "swerun-chaos-"));
      const ids = writeDataset(dir);
      const out = join(dir, "out");
      const args = batchArgs(dir, counts.batches % 2 === 1 ? ["-c", "environment.exec_mode=exec"] : []);
      counts.batches += 1;
      const runIds = new Set<string>();
      const killsBefore = counts.kills;
      const finishedAt = new Map<string, number>();
      for (;;) {
        const killsHere = counts.kills - killsBefore;
        const attempt = run(args, pause && killsHere === 0 ? pause : undefined);
        counts.runs += 1;
        // Up to KILLS_PER_BATCH kills land anywhere within a whole run's time; then the batch may finish.
        const timer =
          !pause && killsHere < KILLS_PER_BATCH
            ? setTimeout(() => attempt.child.kill("SIGKILL"), Math.random() * fullRun)
            : undefined;
        const result = await attempt.done;
        clearTimeout(timer);
        if (existsSync(join(out, "run.json"))) runIds.add(readJson(join(out, "run.json")).run_id);
        for (const line of result.stderr.split("\n")) {
          const restored = /preds\.json: restored (\d+) entr/.exec(line);
          if (restored) counts["preds.json entries restored at a start"] += Number(restored[1]);
          const removed = /Removed (\d+) Docker container/.exec(line);
          if (removed) counts["containers removed at a start"] += Number(removed[1]);
          const temps = /Removed (\d+) temp file/.exec(line);
          if (temps) counts["temp files removed at a start"] += Number(temps[1]);
        }
        const found = trajectories(out);
        for (const [id, trajectory] of found) {
          const before = finishedAt.get(id);
          if (before !== undefined && before !== trajectory.mtime)
            counts["finished instances run again"] += 1;
          if (trajectory.status === "Submitted" && before === undefined) finishedAt.set(id, trajectory.mtime);
        }
        if (result.code === 0) break;
        if (result.signal !== "SIGKILL") throw new Error(`a run failed: ${result.stderr.slice(-2000)}`);
        counts.kills += 1;
        let preds: Record<string, { model_patch: string }> = {};
        try {
          preds = existsSync(join(out, "preds.json")) ? readJson(join(out, "preds.json")) : {};
        } catch {
          counts["kills that left an unparsable preds.json"] += 1;
        }
        if ([...found].some(([id, t]) => preds[id]?.model_patch !== t.patch))
          counts["kills that left preds.json behind a trajectory"] += 1;
        if (leftoverFiles(out) > 0) counts["kills that left a temp file"] += 1;
        const states = (await Promise.all([...runIds].map((id) => containersOf(docker, id))))
          .flat()
          .filter((container) => !counted.has(container.Id));
        for (const container of states) counted.add(container.Id);
        if (states.some((container) => container.State === "created"))
          counts["kills that left a Created container"] += 1;
        if (states.some((container) => container.State === "running"))
          counts["kills that left a running container"] += 1;
      }
      const preds = readJson(join(out, "preds.json"));
      const found = trajectories(out);
      const wrong = ids.filter(
        (id) => preds[id]?.model_patch !== found.get(id)?.patch || !preds[id]?.model_patch,
      );
      counts["lost or wrong preds.json entries"] += wrong.length + Object.keys(preds).length - ids.length;
      for (const id of runIds) {
        const left = await containersOf(docker, id);
        counts["containers left at the end"] += left.length;
        for (const container of left) await docker.getContainer(container.Id).remove({ force: true });
      }
      counts["temp, partial or undo files left at the end"] += readdirSync(out, { recursive: true }).filter(
        (name) => /\.tmp$|\.partial$|\.undo$|\.swerun\.lock$/.test(String(name)),
      ).length;
      evalFailures(dir, out);
      rmSync(dir, { recursive: true, force: true });
      process.stderr.write(
        `batch ${counts.batches}${pause ? ` (${pause})` : ""}: ${counts.kills} kills so far, ${failureCount()} failures\n`,
      );
    }
    return failureCount() - failuresBefore;
  };
  /** A run with the disk filled to 0-60 KiB free at a random moment of it, and what it left checked. */
  const filledRun = async (args: string[], out: string, disk: ReturnType<typeof mountSmallDisk>) => {
    const before = trajectoryBytes(out);
    const attempt = run(args);
    counts.runs += 1;
    let filled = false;
    const timer = setTimeout(() => {
      disk.fill(Math.floor(Math.random() * 16) * 4096);
      filled = true;
    }, Math.random() * fullRun);
    const result = await attempt.done;
    clearTimeout(timer);
    const found = diskFindings(out, before, result);
    disk.unfill();
    if (filled) counts["full disks that landed during a run (--full-disk)"] += 1;
    if (result.code === 1 && !found.unnamed)
      counts["runs stopped by a full disk, exit 1 naming the file"] += 1;
    counts["runs not saved, said on the console"] += Number(
      /not saved: (\d+) run/.exec(result.stderr)?.[1] ?? 0,
    );
    counts["finished trajectories lost or cut by a full disk"] += found.lost;
    counts["trajectories that do not parse after a full disk"] += found.unparsable;
    counts["exits that name no file, raw system errors"] += found.unnamed + found.raw;
    counts["trajectory copies in the temp folder"] += found.copies;
    counts["temp, partial, undo or lock files left after a full disk"] += found.leftovers;
    if (found.unnamed + found.raw > 0)
      process.stderr.write(`a run's console:\n${result.stderr.slice(-2000)}\n`);
  };
  /** Runs the batch with room until it finishes; a finished trajectory it changes is an instance run again. */
  const resumeToEnd = async (args: string[], out: string) => {
    for (let attempt = 1; ; attempt++) {
      const before = [...trajectoryBytes(out)].filter(([, bytes]) => statusOf(bytes) === "Submitted");
      const result = await run(args).done;
      counts.runs += 1;
      const after = trajectoryBytes(out);
      for (const [id, bytes] of before)
        if (!after.get(id)?.equals(bytes)) counts["finished instances run again"] += 1;
      if (result.code === 0) return;
      if (attempt === 3) throw new Error(`a resume with room failed: ${result.stderr.slice(-2000)}`);
    }
  };
  /**
   * One full-disk trial: a fresh batch on a small tmpfs, then `--redo-existing` over its finished
   * trajectories, each met by a full disk, then resumed with room to its end; returns its failures.
   */
  const fullDiskTrial = async (): Promise<number> => {
    const failuresBefore = failureCount();
    const dir = mkdtempSync(join(tmpdir(), "swerun-chaos-"));
    const ids = writeDataset(dir);
    const disk = mountSmallDisk(dir, 4);
    const out = disk.out;
    const args = batchArgs(dir, counts.batches % 2 === 1 ? ["-c", "environment.exec_mode=exec"] : [], out);
    counts.batches += 1;
    const runIds = new Set<string>();
    try {
      for (const redo of [false, true]) {
        await filledRun(redo ? [...args, "--redo-existing"] : args, out, disk);
        if (existsSync(join(out, "run.json"))) runIds.add(readJson(join(out, "run.json")).run_id);
        await resumeToEnd(args, out);
      }
      const preds = readJson(join(out, "preds.json"));
      const found = trajectories(out);
      const wrong = ids.filter(
        (id) => preds[id]?.model_patch !== found.get(id)?.patch || !preds[id]?.model_patch,
      );
      counts["lost or wrong preds.json entries"] += wrong.length + Object.keys(preds).length - ids.length;
      counts["temp, partial or undo files left at the end"] += readdirSync(out, { recursive: true }).filter(
        (name) => /\.tmp$|\.partial$|\.undo$|\.swerun\.lock$/.test(String(name)),
      ).length;
      for (const id of runIds) {
        const left = await containersOf(docker, id);
        counts["containers left at the end"] += left.length;
        for (const container of left) await docker.getContainer(container.Id).remove({ force: true });
      }
    } finally {
      disk.remove();
      rmSync(dir, { recursive: true, force: true });
    }
    process.stderr.write(`batch ${counts.batches} (full disk): ${failureCount()} failures\n`);
    return failureCount() - failuresBefore;
  };
  try {
    while (
      FULL_DISK
        ? counts["random trials"] < (TRIALS ?? 10)
        : TRIALS === undefined
          ? counts.kills < KILLS
          : counts["random trials"] < TRIALS
    ) {
      counts["random trials"] += 1;
      if ((await (FULL_DISK ? fullDiskTrial() : trial())) === 0) counts["random trials that held"] += 1;
    }
    if (POINTS && !FULL_DISK)
      for (const point of CHAOS_POINTS) {
        counts["chaos points"] += 1;
        if ((await trial(point)) === 0) counts["chaos points that held"] += 1;
      }
  } finally {
    closeDockerClient(docker);
  }
  // The rows of the other mode (kills, or a full disk) say nothing here.
  const shown = Object.entries(counts).filter(([key]) =>
    FULL_DISK
      ? !/kill|chaos points|removed at a start|restored|--eval|--events/.test(key)
      : !/full disk|temp folder|name no file|not saved/.test(key),
  );
  const width = Math.max(...shown.map(([key]) => key.length));
  process.stdout.write(
    `chaos: ${INSTANCES} instances per batch, ${WORKERS} workers${EVAL ? ", --eval" : ""}${EVENTS ? ", --events" : ""}, batches alternating exec_mode session and exec, ` +
      `${FULL_DISK ? "the disk full" : "kills"} uniformly within one whole run (${(fullRun / 1000).toFixed(1)} s); ${((Date.now() - started) / 1000).toFixed(0)} s in all\n`,
  );
  for (const [key, value] of shown) process.stdout.write(`${key.padEnd(width)}  ${value}\n`);
  process.exitCode = failureCount() > 0 ? 1 : 0;
}

await main();
