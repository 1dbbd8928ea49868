import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "../util/package-root.js";
import { PROCESS_TAG, type RunnerMessage, type RunnerRequest } from "./command-runner-protocol.js";

/**
 * Runs commands from a small long-lived helper process instead of from swerun itself. Forking costs
 * grow with the forking process's memory (page tables are copied), and swerun's memory grows with the
 * trajectories it holds; the helper stays small, so every command starts as fast as from a bare shell.
 * If swerun dies, even by SIGKILL, the helper sees its channel close and kills every running command.
 */

export { PROCESS_TAG };

/**
 * The runner's program (`command-runner.ts`), as the build writes it: one bundled file in dist/, used from
 * the sources too (the tests' global setup builds dist/ first).
 */
const RUNNER = () => join(packageRoot(), "dist", "src", "environments", "command-runner.js");

export interface SpawnRequest {
  file: string;
  args: string[];
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

interface Pending {
  onData: (chunk: Buffer) => void;
  resolve: (result: SpawnResult) => void;
}

let worker: ChildProcess | undefined;
let nextId = 0;
const pending = new Map<number, Pending>();

function startWorker(): ChildProcess {
  // A 1 MiB young generation keeps the helper small (it only passes chunks of output along).
  const child = spawn(process.execPath, ["--max-semi-space-size=1", RUNNER()], {
    stdio: ["ignore", "ignore", "inherit", "ipc"],
    serialization: "advanced",
  });
  child.on("message", (message: RunnerMessage) => {
    const entry = pending.get(message.id);
    if (!entry) return;
    if (message.type === "data") {
      entry.onData(Buffer.from(message.chunk.buffer, message.chunk.byteOffset, message.chunk.byteLength));
    } else {
      pending.delete(message.id);
      refWhileBusy(child);
      entry.resolve({ code: message.code ?? null, signal: message.signal ?? null, error: message.error });
    }
  });
  child.on("exit", () => {
    worker = undefined;
    for (const [id, entry] of pending) {
      pending.delete(id);
      entry.resolve({ code: null, signal: null, error: "the command runner process exited" });
    }
  });
  child.unref();
  refWhileBusy(child);
  return child;
}

/** Sends the runner a request (typed: the runner reads the same union). */
function tell(child: ChildProcess, message: RunnerRequest): void {
  child.send(message);
}

/** Keeps the process alive while commands run, and lets it exit when none do. */
function refWhileBusy(child: ChildProcess): void {
  const channel = child.channel as { ref?: () => void; unref?: () => void } | undefined;
  if (pending.size > 0) channel?.ref?.();
  else channel?.unref?.();
}

/**
 * Starts the helper process now, so that it boots while the rest of swerun loads (the CLI calls this first
 * for commands that usually run local commands). It exits with swerun if no command ever uses it.
 */
export function startCommandRunner(): void {
  worker ??= startWorker();
}

/** Starts a command in its own process group; `kill` kills it and every process it started (see command-runner.ts). */
export function spawnCommand(request: SpawnRequest): { done: Promise<SpawnResult>; kill: () => void } {
  worker ??= startWorker();
  const child = worker;
  nextId += 1;
  const id = nextId;
  const done = new Promise<SpawnResult>((resolve) => {
    pending.set(id, { onData: request.onData, resolve });
  });
  refWhileBusy(child);
  tell(child, {
    type: "run",
    id,
    file: request.file,
    args: request.args,
    cwd: request.cwd,
    env: request.env,
    tag: request.tag,
  });
  return {
    done,
    kill: () => {
      if (pending.has(id) && child.connected) tell(child, { type: "kill", id });
    },
  };
}

/**
 * Kills every process that the commands of environment `tag` started and that still runs (background
 * jobs, `nohup`, `setsid`, double-forked daemons that kept the tag), and resolves once they are gone.
 */
export function reapProcesses(tag: string): Promise<void> {
  const child = worker;
  if (!child?.connected) return Promise.resolve();
  nextId += 1;
  const id = nextId;
  const done = new Promise<void>((resolve) => {
    pending.set(id, { onData: () => {}, resolve: () => resolve() });
  });
  refWhileBusy(child);
  tell(child, { type: "reap", id, tag });
  return done;
}
