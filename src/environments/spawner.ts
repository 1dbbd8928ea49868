import { type ChildProcess, spawn } from "node:child_process";

/**
 * Runs commands from a small long-lived helper process instead of from swerun itself. Forking costs
 * grow with the forking process's memory (page tables are copied), and swerun's memory grows with the
 * trajectories it holds; the helper stays small, so every command starts as fast as from a bare shell.
 * If swerun dies, even by SIGKILL, the helper sees its channel close and kills every running command.
 */

/** Every command's environment carries `SWERUN_PROCESS_TAG=<environment tag>:<command id>`; its descendants inherit it. */
export const PROCESS_TAG = "SWERUN_PROCESS_TAG";

/**
 * The helper's code (plain JavaScript, run with `node -e`, so it works from source and from dist).
 * Stopping a command (timeout, interrupt) or an environment (close) kills every process it can find:
 * the command's process group, its process tree, and every process whose environment carries the tag
 * (which finds those that left the group with setsid and the tree by double-forking). Linux's /proc is
 * scanned; elsewhere only the process group is killed. Found processes are frozen (SIGSTOP) and the scan
 * repeats until it finds nothing new, so a tree that forks while being killed is caught whole; then all
 * get SIGKILL. A killed command stops being read as soon as its own process exits, so a process that
 * escaped every scan and holds the output open cannot keep the action from ending.
 */
const WORKER = `
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const TAG = ${JSON.stringify(PROCESS_TAG)};
const running = new Map();
const tags = new Set();
// Ctrl-C on a terminal signals the whole foreground process group: swerun decides what it means.
process.on("SIGINT", () => {});
const send = (message) => { if (process.connected) process.send(message); };

// Every process on this machine, as pid -> parent pid (empty without /proc).
function processParents() {
  const parents = new Map();
  let names = [];
  try { names = fs.readdirSync("/proc"); } catch { return parents; }
  for (const name of names) {
    if (!/^[0-9]+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync("/proc/" + name + "/stat", "latin1");
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {}
  }
  return parents;
}

// Whether the process's environment (as it was when its program started) has a tag that passes.
function tagged(pid, test) {
  let text;
  try { text = fs.readFileSync("/proc/" + pid + "/environ", "latin1"); } catch { return false; }
  for (const entry of text.split("\\0")) {
    if (entry.startsWith(TAG + "=") && test(entry.slice(TAG.length + 1))) return true;
  }
  return false;
}

// Freezes, then kills, the processes under the roots and those whose tag passes; returns their pids.
function reap(roots, test) {
  const stopped = new Set();
  for (let round = 0; round < 100; round++) {
    const parents = processParents();
    const children = new Map();
    for (const [pid, parent] of parents) {
      if (!children.has(parent)) children.set(parent, []);
      children.get(parent).push(pid);
    }
    const queue = [...roots, ...stopped];
    for (const pid of parents.keys()) if (!stopped.has(pid) && tagged(pid, test)) queue.push(pid);
    const seen = new Set();
    while (queue.length > 0) {
      const pid = queue.pop();
      if (seen.has(pid)) continue;
      seen.add(pid);
      for (const child of children.get(pid) || []) queue.push(child);
    }
    const fresh = [...seen].filter((pid) => parents.has(pid) && !stopped.has(pid) && pid > 1 && pid !== process.pid && pid !== process.ppid);
    if (fresh.length === 0) break;
    for (const pid of fresh) { try { process.kill(pid, "SIGSTOP"); } catch {} stopped.add(pid); }
  }
  for (const pid of stopped) { try { process.kill(pid, "SIGKILL"); } catch {} }
  return stopped;
}

function gone(pid) {
  try { return /^[0-9]+ \\(.*\\) [ZX]/s.test(fs.readFileSync("/proc/" + pid + "/stat", "latin1")); } catch { return true; }
}

function whenGone(pids, callback, deadline = Date.now() + 2000) {
  if ([...pids].every(gone) || Date.now() > deadline) callback();
  else setTimeout(() => whenGone(pids, callback, deadline), 5);
}

function finish(entry, code, signal) {
  if (entry.finished) return;
  entry.finished = true;
  running.delete(entry.id);
  send({ type: "exit", id: entry.id, code, signal });
}

function kill(entry) {
  if (entry.killed) return;
  entry.killed = true;
  const child = entry.child;
  try { process.kill(-child.pid, "SIGSTOP"); } catch {}
  const own = entry.tag + ":" + entry.id;
  reap([child.pid], (tag) => tag === own);
  try { process.kill(-child.pid, "SIGKILL"); } catch {}
  // What is still in the pipe arrives within moments; then stop reading, whoever holds the pipe.
  const stopReading = () => setTimeout(() => {
    child.stdout.destroy();
    child.stderr.destroy();
    finish(entry, child.exitCode, child.signalCode);
  }, 50);
  if (child.exitCode !== null || child.signalCode !== null) stopReading();
  else child.once("exit", stopReading);
}

process.on("message", (message) => {
  if (message.type === "run") {
    let child;
    tags.add(message.tag);
    const env = { ...message.env, [TAG]: message.tag + ":" + message.id };
    try {
      child = spawn(message.file, message.args, { cwd: message.cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    } catch (error) {
      send({ type: "exit", id: message.id, error: String(error && error.message || error) });
      return;
    }
    const entry = { id: message.id, tag: message.tag, child, killed: false, finished: false };
    running.set(message.id, entry);
    child.stdout.on("data", (chunk) => { if (!entry.finished) send({ type: "data", id: message.id, chunk }); });
    child.stderr.on("data", (chunk) => { if (!entry.finished) send({ type: "data", id: message.id, chunk }); });
    child.on("error", (error) => { if (!entry.finished) { entry.finished = true; running.delete(message.id); send({ type: "exit", id: message.id, error: error.message }); } });
    child.on("close", (code, signal) => finish(entry, code, signal));
  } else if (message.type === "kill") {
    const entry = running.get(message.id);
    if (entry && entry.child.pid) kill(entry);
  } else if (message.type === "reap") {
    tags.delete(message.tag);
    const roots = [];
    for (const entry of running.values()) {
      if (entry.tag === message.tag && entry.child.pid) { roots.push(entry.child.pid); kill(entry); }
    }
    const pids = reap(roots, (tag) => tag.startsWith(message.tag + ":"));
    whenGone(pids, () => send({ type: "exit", id: message.id, code: 0, signal: null }));
  }
});
process.on("disconnect", () => {
  const roots = [];
  for (const entry of running.values()) {
    if (entry.child.pid) { roots.push(entry.child.pid); try { process.kill(-entry.child.pid, "SIGKILL"); } catch {} }
  }
  reap(roots, (tag) => tags.has(tag.slice(0, tag.lastIndexOf(":"))));
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
  const child = spawn(process.execPath, ["--max-semi-space-size=1", "-e", WORKER], {
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
  refWhileBusy(child);
  return child;
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

/** Starts a command in its own process group; `kill` kills it and every process it started (see WORKER). */
export function spawnCommand(request: SpawnRequest): { done: Promise<SpawnResult>; kill: () => void } {
  worker ??= startWorker();
  const child = worker;
  nextId += 1;
  const id = nextId;
  const done = new Promise<SpawnResult>((resolve) => {
    pending.set(id, { onData: request.onData, resolve });
  });
  refWhileBusy(child);
  child.send({
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
      if (pending.has(id) && child.connected) child.send({ type: "kill", id });
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
  child.send({ type: "reap", id, tag });
  return done;
}
