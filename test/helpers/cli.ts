import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "../../src/util/package-root.js";
import { procStat } from "./processes.js";

export const CLI = join(packageRoot(), "dist", "src", "cli.cjs");

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts the built CLI as a child process (no TTY), with extra environment variables (and as another user: `uid`). */
export function startCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; uid?: number } = {},
) {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd ?? packageRoot(),
    env: { ...process.env, NO_COLOR: "1", ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
    ...(options.uid === undefined ? {} : { uid: options.uid, gid: options.uid }),
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk) => {
    stdout += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    stderr += chunk;
  });
  const done = new Promise<CliResult>((resolve) => {
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done, output: () => stdout, errors: () => stderr };
}

export function runCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; uid?: number } = {},
) {
  return startCli(args, options).done;
}

/** Resolves once `check` passes, polling every 20 ms (gives up after `timeoutMs`). */
export async function waitFor(check: () => boolean, timeoutMs = 20_000, child?: ChildProcess): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error("waitFor: condition not met in time");
    if (child && child.exitCode !== null) throw new Error(`waitFor: the process exited (${child.exitCode})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Resolves once a CLI started with SWERUN_CHAOS_PAUSE has said it paused at `point` and has stopped: it says
 * so just before it stops itself, so a SIGCONT sent on the words alone could come first and be lost.
 */
export async function pausedAt(run: ReturnType<typeof startCli>, point: string): Promise<void> {
  // A process that has exited has no stat: not stopped (waitFor then says it exited).
  const stopped = () => procStat(run.child.pid ?? 0)?.[0] === "T";
  await waitFor(
    () => run.errors().includes(`swerun chaos: paused at ${point} `) && stopped(),
    60_000,
    run.child,
  );
}

/**
 * Starts the CLI with SWERUN_CHAOS_PAUSE=`point` (see src/util/chaos.ts), waits until it has stopped itself
 * there, and SIGKILLs it: a crash at exactly that point. Returns what it printed.
 */
export async function killAt(
  point: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<CliResult> {
  const run = startCli(args, { ...options, env: { ...options.env, SWERUN_CHAOS_PAUSE: point } });
  await pausedAt(run, point);
  run.child.kill("SIGKILL");
  return run.done;
}
