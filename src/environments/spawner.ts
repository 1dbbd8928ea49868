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
 * started by a small spawner process, Python's or Perl's (command-spawner.ts), which is also the watchdog
 * that kills what they left if swerun dies, even by SIGKILL. A command it cannot start (a NUL byte, a
 * missing cwd or program) and every command on a machine without either is spawned by swerun itself (a
 * fork of the Node process), watched by the spawner or, without one, by a shell watchdog
 * (shell/command-watchdog.sh).
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

/** The spawner, started (or taken over from the bin) once, and again if it ended; undefined without one. */
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

/**
 * Without a spawner: the shell watchdog, whose stdin is the pipe whose end tells it that swerun is gone;
 * started by the first command's spawn, before the command (see `spawnDirectly`). Undefined if it cannot start.
 */
function shellWatchdogInput(): Writable | undefined {
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
      return undefined;
    }
  }
  return shellWatchdog;
}

/** Tells the watchdog (the spawner's, or the shell watchdog) that a command started (+pid) or ended (-pid). */
function watch(line: string): void {
  const runner = commandSpawner();
  if (runner) runner.watch(line);
  else shellWatchdogInput()?.write(`${line}\n`);
}

/** Starts the spawner now, while the process is small (the CLI calls this first for local runs). */
export function startCommandRunner(): void {
  commandSpawner();
}

/** Which program starts the commands: "python", "perl", or "none" (swerun spawns them itself). */
export function commandRunnerKind(): "python" | "perl" | "none" {
  return commandSpawner()?.kind ?? "none";
}

/**
 * Ends the spawner (it kills what commands left running, as when swerun ends); the next command starts
 * another, by SWERUN_COMMAND_SPAWNER as it is then.
 */
export function closeCommandRunner(): void {
  spawner?.close();
  // Its watchdog looks for the commands by their tags' prefix: the next spawner's commands get another.
  if (spawner) prefix = undefined;
}

/**
 * Freezes and kills a command's process group, its process tree and every process carrying its tag; the
 * promise resolves once those it found are gone (a loaded machine may take a while to schedule their ends).
 */
function killTree(pid: number, own: string): Promise<void> {
  signal(-pid, "SIGSTOP");
  const found = reap([pid], (tag) => tag === own);
  signal(-pid, "SIGKILL");
  return whenGone(found);
}

const SIGNAL_NAMES = new Map(Object.entries(os.constants.signals).map(([name, number]) => [number, name]));

/** A wait status (exit code << 8, or the signal's number) as Node reports an exit. */
function exitOf(status: number | undefined): SpawnResult {
  if (status === undefined) return { code: null, signal: null };
  if ((status & 127) === 0) return { code: status >> 8, signal: null };
  return { code: null, signal: (SIGNAL_NAMES.get(status & 127) ?? "SIGKILL") as NodeJS.Signals };
}

/** Starts a command in its own process group; `kill` kills it and every process it started. */
export function spawnCommand(request: SpawnRequest): Spawned {
  if (nextId === 0) markNewProcesses();
  nextId += 1;
  const own = `${tagPrefix()}${request.tag}:${nextId}`;
  const args = typeof request.args === "function" ? request.args(own) : request.args;
  const direct = () =>
    spawnDirectly(request.file, args, request, { ...request.env, [PROCESS_TAG]: own }, own);
  const runner = commandSpawner();
  if (!runner) return direct();
  const run = new SpawnerRun(runner, own, direct);
  const env = { base: request.env, tag: `${PROCESS_TAG}=${own}` };
  run.id = runner.run(request.file, [request.file, ...args], resolve(request.cwd), env, {
    started: (pid) => run.started(pid),
    notRun: () => run.notRun(),
    output: request.onData,
    outputEnd: () => run.outputEnd(),
    exited: (status) => run.exited(status),
    lost: () => run.lost(),
  });
  if (run.id === undefined) return direct();
  return { done: run.done, kill: () => run.kill() };
}

/**
 * One command in the spawner: done once its output has ended and its process has exited. A killed command
 * ends once its own process has: what is still in the pipe arrives within moments, then reading stops,
 * whoever still holds the pipe. One the spawner could not start is spawned directly.
 */
class SpawnerRun {
  id: number | undefined;
  readonly done: Promise<SpawnResult>;
  readonly #runner: CommandSpawner;
  readonly #own: string;
  readonly #direct: () => Spawned;
  #resolve: (result: SpawnResult | Promise<SpawnResult>) => void = () => {};
  #pid: number | undefined;
  #status: number | undefined;
  #ended = false;
  #killed = false;
  #killing: Promise<void> = Promise.resolve();
  #directRun: Spawned | undefined;
  #stopping: NodeJS.Timeout | undefined;

  constructor(runner: CommandSpawner, own: string, direct: () => Spawned) {
    this.#runner = runner;
    this.#own = own;
    this.#direct = direct;
    this.done = new Promise((resolve) => {
      this.#resolve = resolve;
    });
  }

  started(pid: number): void {
    this.#pid = pid;
    if (this.#killed) this.#killing = killTree(pid, this.#own);
  }

  notRun(): void {
    if (this.#killed) {
      this.#resolve({ code: null, signal: null });
      return;
    }
    this.#directRun = this.#direct();
    this.#resolve(this.#directRun.done);
  }

  outputEnd(): void {
    this.#ended = true;
    if (this.#status !== undefined) this.#finish();
  }

  exited(status: number): void {
    this.#status = status;
    if (this.#ended) this.#finish();
    else if (this.#killed) this.#stopReading();
  }

  /** The spawner died: the command may still run. */
  lost(): void {
    if (this.#pid !== undefined) this.#killing = killTree(this.#pid, this.#own);
    this.#status ??= 9;
    this.#finish();
  }

  kill(): void {
    if (this.#killed) return;
    this.#killed = true;
    this.#directRun?.kill();
    if (this.#pid === undefined) return;
    this.#killing = killTree(this.#pid, this.#own);
    if (this.#status !== undefined) this.#stopReading();
  }

  #stopReading(): void {
    this.#stopping ??= setTimeout(() => {
      if (this.id !== undefined) this.#runner.drop(this.id);
      this.#finish();
    }, 50);
  }

  #finish(): void {
    clearTimeout(this.#stopping);
    if (this.id !== undefined) this.#runner.done(this.id);
    const result = exitOf(this.#status);
    void this.#killing.then(() => this.#resolve(result));
  }
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
  // The shell watchdog starts before the command: started after, its spawn (a fork of Node, tens of ms on a
  // loaded machine) held back the command's pid, and a swerun killed meanwhile left what the command
  // started without its tag (`env -i`) running.
  if (!commandSpawner()) shellWatchdogInput();
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
  let killing: Promise<void> = Promise.resolve();
  let stopReading = () => {};
  const done = new Promise<SpawnResult>((resolve) => {
    let finished = false;
    const finish = (result: SpawnResult) => {
      if (finished) return;
      finished = true;
      if (pid) watch(`-${pid}`);
      void killing.then(() => resolve(result));
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
    killing = killTree(pid, own);
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
