import { type ChildProcess, spawn } from "node:child_process";
import os from "node:os";
import { join, resolve } from "node:path";
import type { Writable } from "node:stream";
import { packageRoot } from "../util/package-root.js";
import { CommandSpawner, newTagPrefix } from "./command-spawner.js";
import { markNewProcesses, PROCESS_TAG, reap, signal, whenGone } from "./process-reaper.js";

/**
 * Runs local commands, each in a process group of its own, and kills everything a command started when it
 * times out or is interrupted, or when its environment closes (process-reaper.ts finds them). Commands are
 * started by a small Perl spawner (command-spawner.ts), which is also the watchdog that kills what they left
 * if swerun dies, even by SIGKILL. A command it cannot start (a NUL byte, a missing cwd or program) and
 * every command on a machine without Perl is spawned by swerun itself (a fork of the Node process), watched
 * by the spawner or, without one, by a shell watchdog (shell/command-watchdog.sh).
 */

export { PROCESS_TAG };

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

type Spawned = { done: Promise<SpawnResult>; kill: () => void };

let spawner: CommandSpawner | undefined;
let prefix: string | undefined;
let shellWatchdog: Writable | undefined;
let nextId = 0;

/** The spawner, started (or taken over from the bin) once, and again if it died; undefined without Perl. */
function commandSpawner(): CommandSpawner | undefined {
  if (spawner?.alive) return spawner;
  if (spawner === undefined) spawner = CommandSpawner.take();
  if (!spawner?.alive) spawner = CommandSpawner.start(prefix ?? newTagPrefix());
  prefix ??= spawner?.prefix;
  return spawner;
}

function tagPrefix(): string {
  prefix ??= commandSpawner()?.prefix ?? newTagPrefix();
  return prefix;
}

/** Without a spawner: a shell watchdog whose stdin is the pipe whose end tells it that swerun is gone. */
function watch(line: string): void {
  if (commandSpawner()?.alive) return spawner?.watch(line);
  if (!shellWatchdog) {
    try {
      const child = spawn("/bin/sh", [join(packageRoot(), "shell", "command-watchdog.sh"), tagPrefix()], {
        stdio: ["pipe", "ignore", "ignore"],
        detached: true,
      });
      child.on("error", () => {});
      child.unref();
      shellWatchdog = child.stdin as Writable;
      shellWatchdog.on("error", () => {});
      (shellWatchdog as { unref?: () => void }).unref?.();
    } catch {
      return;
    }
  }
  shellWatchdog.write(`${line}\n`);
}

/** Starts the spawner now, while the process is small (the CLI calls this first for local runs). */
export function startCommandRunner(): void {
  commandSpawner();
}

/** Freezes and kills a command's process group, its process tree and every process carrying its tag. */
function killTree(pid: number, own: string): void {
  signal(-pid, "SIGSTOP");
  reap([pid], (tag) => tag === own);
  signal(-pid, "SIGKILL");
}

const SIGNAL_NAMES = new Map(Object.entries(os.constants.signals).map(([name, number]) => [number, name]));

/** Starts a command in its own process group; `kill` kills it and every process it started. */
export function spawnCommand(request: SpawnRequest): Spawned {
  if (nextId === 0) markNewProcesses();
  nextId += 1;
  const own = `${tagPrefix()}${request.tag}:${nextId}`;
  const args = typeof request.args === "function" ? request.args(own) : request.args;
  const env = { ...request.env, [PROCESS_TAG]: own };
  const runner = commandSpawner();
  if (!runner) return spawnDirectly(request.file, args, request, env, own);
  let pid: number | undefined;
  let killed = false;
  let direct: Spawned | undefined;
  let status: number | undefined;
  let ended = false;
  let stopping: NodeJS.Timeout | undefined;
  let resolveDone: (result: SpawnResult | Promise<SpawnResult>) => void = () => {};
  const done = new Promise<SpawnResult>((resolve) => {
    resolveDone = resolve;
  });
  const result = (): SpawnResult =>
    status === undefined
      ? { code: null, signal: null }
      : (status & 127) === 0
        ? { code: status >> 8, signal: null }
        : { code: null, signal: (SIGNAL_NAMES.get(status & 127) ?? "SIGKILL") as NodeJS.Signals };
  let id: number | undefined;
  const finish = () => {
    clearTimeout(stopping);
    if (id !== undefined) runner.done(id);
    resolveDone(result());
  };
  // A killed command ends once its own process has: what is still in the pipe arrives within moments,
  // then reading stops, whoever still holds the pipe.
  const stopReading = () => {
    stopping ??= setTimeout(() => {
      if (id !== undefined) runner.drop(id);
      finish();
    }, 50);
  };
  id = runner.run(request.file, [request.file, ...args], resolve(request.cwd), env, {
    started(started) {
      pid = started;
      if (killed) killTree(started, own);
    },
    notRun() {
      if (killed) return resolveDone({ code: null, signal: null });
      direct = spawnDirectly(request.file, args, request, env, own);
      resolveDone(direct.done);
    },
    output: request.onData,
    outputEnd() {
      ended = true;
      if (status !== undefined) finish();
    },
    exited(value) {
      status = value;
      if (ended) finish();
      else if (killed) stopReading();
    },
    lost() {
      if (pid !== undefined) killTree(pid, own);
      status ??= 9;
      finish();
    },
  });
  if (id === undefined) return spawnDirectly(request.file, args, request, env, own);
  const kill = () => {
    if (killed) return;
    killed = true;
    direct?.kill();
    if (pid === undefined) return;
    killTree(pid, own);
    if (status !== undefined) stopReading();
  };
  return { done, kill };
}

/**
 * Spawns a command from swerun itself (a fork of the Node process) in a session of its own, its pid told
 * to the watchdog, which kills its process group if swerun dies.
 */
function spawnDirectly(
  file: string,
  args: string[],
  request: SpawnRequest,
  env: NodeJS.ProcessEnv,
  own: string,
): Spawned {
  let child: ChildProcess;
  try {
    child = spawn(file, args, {
      cwd: request.cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
  } catch (error) {
    const message = String((error as Error)?.message || error);
    return { done: Promise.resolve({ code: null, signal: null, error: message }), kill: () => {} };
  }
  const pid = child.pid;
  if (pid) watch(`+${pid}`);
  let killed = false;
  let stopReading = () => {};
  const done = new Promise<SpawnResult>((resolve) => {
    let finished = false;
    const finish = (result: SpawnResult) => {
      if (finished) return;
      finished = true;
      if (pid) watch(`-${pid}`);
      resolve(result);
    };
    child.stdout?.on("data", (chunk: Buffer) => finished || request.onData(chunk));
    child.stderr?.on("data", (chunk: Buffer) => finished || request.onData(chunk));
    child.on("error", (error) => finish({ code: null, signal: null, error: error.message }));
    child.on("close", (code, signal) => finish({ code, signal }));
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
    killTree(pid, own);
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
  const pids = reap([], (value) => value.startsWith(`${tagPrefix()}${tag}:`));
  return whenGone(pids);
}
