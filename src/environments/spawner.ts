import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import type { Writable } from "node:stream";
import { packageRoot } from "../util/package-root.js";
import { randomId } from "../util/random-id.js";
import { PROCESS_TAG, reap, signal, whenGone } from "./process-reaper.js";

/**
 * Runs local commands, each in a process group of its own, and kills everything a command started when it
 * times out or is interrupted, or when its environment closes (process-reaper.ts finds them). Commands are
 * spawned by swerun itself (libuv forks: about 1 ms more per command for every 100 MiB swerun holds,
 * bench/lean.ts); if swerun dies, even by SIGKILL, a small shell watchdog (shell/command-watchdog.sh) sees
 * its pipe close and kills every process the commands left.
 */

export { PROCESS_TAG };

/**
 * Every tag this process gives starts with this, so the watchdog finds exactly this process's commands: its
 * pid (no other live process has it) and a random part (in case a pid namespace reuses it). */
const PREFIX = `${process.pid.toString(36)}${randomId(8)}-`;

export interface SpawnRequest {
  file: string;
  /** The arguments; a function gets the command's tag, for a program that must pass it on (bwrap `--setenv`). */
  args: string[] | ((tag: string) => string[]);
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The environment the command belongs to (letters and digits): `reapProcesses(tag)` kills what it left. */
  tag: string;
  onData: (chunk: Buffer) => void;
}

export interface SpawnResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  error?: string;
}

let watchdog: Writable | undefined;
let nextId = 0;

/** Starts the watchdog (once); its stdin is the pipe whose end tells it that swerun is gone. */
function startWatchdog(): Writable | undefined {
  if (watchdog) return watchdog;
  let child: ChildProcess;
  try {
    child = spawn("/bin/sh", [join(packageRoot(), "shell", "command-watchdog.sh"), PREFIX], {
      stdio: ["pipe", "ignore", "ignore"],
      detached: true,
    });
  } catch {
    return undefined;
  }
  child.on("error", () => {});
  child.unref();
  const stdin = child.stdin as Writable & { unref?: () => void };
  stdin.on("error", () => {});
  stdin.unref?.();
  watchdog = stdin;
  return watchdog;
}

/** Starts the watchdog now, while the process is small (the CLI calls this first for local runs). */
export function startCommandRunner(): void {
  startWatchdog();
}

/** Starts a command in its own process group; `kill` kills it and every process it started. */
export function spawnCommand(request: SpawnRequest): { done: Promise<SpawnResult>; kill: () => void } {
  const guard = startWatchdog();
  nextId += 1;
  const own = `${PREFIX}${request.tag}:${nextId}`;
  let child: ChildProcess;
  try {
    const args = typeof request.args === "function" ? request.args(own) : request.args;
    child = spawn(request.file, args, {
      cwd: request.cwd,
      env: { ...request.env, [PROCESS_TAG]: own },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
  } catch (error) {
    const message = String((error as Error)?.message || error);
    return { done: Promise.resolve({ code: null, signal: null, error: message }), kill: () => {} };
  }
  const pid = child.pid;
  if (pid) guard?.write(`+${pid}\n`);
  let killed = false;
  let stopReading = () => {};
  const done = new Promise<SpawnResult>((resolve) => {
    let finished = false;
    const finish = (result: SpawnResult) => {
      if (finished) return;
      finished = true;
      if (pid) guard?.write(`-${pid}\n`);
      resolve(result);
    };
    child.stdout?.on("data", (chunk: Buffer) => finished || request.onData(chunk));
    child.stderr?.on("data", (chunk: Buffer) => finished || request.onData(chunk));
    child.on("error", (error) => finish({ code: null, signal: null, error: error.message }));
    child.on("close", (code, signal) => finish({ code, signal }));
    // A killed command ends once its own process has: what is still in the pipe arrives within moments,
    // then reading stops, whoever still holds the pipe.
    stopReading = () =>
      setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish({ code: child.exitCode, signal: child.signalCode });
      }, 50);
  });
  const kill = () => {
    if (killed || !pid) return;
    killed = true;
    signal(-pid, "SIGSTOP");
    reap([pid], (tag) => tag === own);
    signal(-pid, "SIGKILL");
    if (child.exitCode !== null || child.signalCode !== null) stopReading();
    else child.once("exit", stopReading);
  };
  return { done, kill };
}

/**
 * Kills every process that the commands of environment `tag` started and that still runs (background
 * jobs, `nohup`, `setsid`, double-forked daemons that kept the tag), and resolves once they are gone.
 */
export function reapProcesses(tag: string): Promise<void> {
  if (nextId === 0) return Promise.resolve();
  const pids = reap([], (value) => value.startsWith(`${PREFIX}${tag}:`));
  return whenGone(pids);
}
