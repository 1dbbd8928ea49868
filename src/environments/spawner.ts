import { type ChildProcess, spawn } from "node:child_process";

/**
 * Runs commands from a small long-lived helper process instead of from swerun itself. Forking costs
 * grow with the forking process's memory (page tables are copied), and swerun's memory grows with the
 * trajectories it holds; the helper stays small, so every command starts as fast as from a bare shell.
 * If swerun dies, even by SIGKILL, the helper sees its channel close and kills every running command.
 */

/** The helper's code (plain JavaScript, run with `node -e`, so it works from source and from dist). */
const WORKER = `
const { spawn } = require("node:child_process");
const running = new Map();
// Ctrl-C on a terminal signals the whole foreground process group: swerun decides what it means.
process.on("SIGINT", () => {});
const send = (message) => { if (process.connected) process.send(message); };
process.on("message", (message) => {
  if (message.type === "run") {
    let child;
    try {
      child = spawn(message.file, message.args, { cwd: message.cwd, env: message.env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    } catch (error) {
      send({ type: "exit", id: message.id, error: String(error && error.message || error) });
      return;
    }
    running.set(message.id, child);
    child.stdout.on("data", (chunk) => send({ type: "data", id: message.id, chunk }));
    child.stderr.on("data", (chunk) => send({ type: "data", id: message.id, chunk }));
    child.on("error", (error) => { running.delete(message.id); send({ type: "exit", id: message.id, error: error.message }); });
    child.on("close", (code, signal) => { running.delete(message.id); send({ type: "exit", id: message.id, code, signal }); });
  } else if (message.type === "kill") {
    const child = running.get(message.id);
    if (child && child.pid) { try { process.kill(-child.pid, "SIGKILL"); } catch {} }
  }
});
process.on("disconnect", () => {
  for (const child of running.values()) { try { process.kill(-child.pid, "SIGKILL"); } catch {} }
  process.exit(0);
});
`;

type WorkerMessage =
  | { type: "data"; id: number; chunk: Buffer | Uint8Array }
  | { type: "exit"; id: number; code?: number | null; signal?: NodeJS.Signals | null; error?: string };

export interface SpawnRequest {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
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
  const child = spawn(process.execPath, ["-e", WORKER], {
    stdio: ["ignore", "ignore", "inherit", "ipc"],
    serialization: "advanced",
  });
  child.on("message", (message: WorkerMessage) => {
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
  return child;
}

/** Keeps the process alive while commands run, and lets it exit when none do. */
function refWhileBusy(child: ChildProcess): void {
  const channel = child.channel as { ref?: () => void; unref?: () => void } | undefined;
  if (pending.size > 0) channel?.ref?.();
  else channel?.unref?.();
}

/** Starts a command in its own process group; `kill` SIGKILLs the group. */
export function spawnCommand(request: SpawnRequest): { done: Promise<SpawnResult>; kill: () => void } {
  worker ??= startWorker();
  const child = worker;
  nextId += 1;
  const id = nextId;
  const done = new Promise<SpawnResult>((resolve) => {
    pending.set(id, { onData: request.onData, resolve });
  });
  refWhileBusy(child);
  child.send({ type: "run", id, file: request.file, args: request.args, cwd: request.cwd, env: request.env });
  return {
    done,
    kill: () => {
      if (pending.has(id) && child.connected) child.send({ type: "kill", id });
    },
  };
}
