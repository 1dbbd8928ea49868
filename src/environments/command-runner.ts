/**
 * The command-runner process: a program of its own (not a module to import), started by `spawner.ts` with
 * an IPC channel. It runs commands for swerun and passes their output back (see spawner.ts for why).
 *
 * Stopping a command (timeout, interrupt) or an environment (close) kills every process it can find:
 * the command's process group, its process tree, and every process whose environment carries the tag
 * (which finds those that left the group with setsid and the tree by double-forking). Linux's /proc is
 * scanned; elsewhere only the process group is killed. Found processes are frozen (SIGSTOP) and the scan
 * repeats until it finds nothing new, so a tree that forks while being killed is caught whole; then all
 * get SIGKILL. A killed command stops being read as soon as its own process exits, so a process that
 * escaped every scan and holds the output open cannot keep the action from ending.
 *
 * It imports nothing but Node's modules and the protocol's constant (the build bundles it into one file,
 * `dist/src/environments/command-runner.js`), so it starts about as fast as a bare `node`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { PROCESS_TAG, type RunnerMessage, type RunnerRequest } from "./command-runner-protocol.js";

interface Running {
  id: number;
  tag: string;
  child: ChildProcess;
  killed: boolean;
  finished: boolean;
}

/** A test on the part of a process's tag after `=`: `<environment tag>:<command id>`. */
type TagTest = (tag: string) => boolean;

const running = new Map<number, Running>();
/** The environments whose commands ran here and that were not reaped yet. */
const tags = new Set<string>();

const send = (message: RunnerMessage) => {
  if (process.connected) process.send?.(message);
};

/** Every process on this machine, as pid -> parent pid (empty without /proc). */
function processParents(): Map<number, number> {
  const parents = new Map<number, number>();
  let names: string[] = [];
  try {
    names = readdirSync("/proc");
  } catch {
    return parents;
  }
  for (const name of names) {
    if (!/^[0-9]+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "latin1");
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // The process ended while the list was read.
    }
  }
  return parents;
}

/** Whether the process's environment (as it was when its program started) has a tag that passes. */
function tagged(pid: number, test: TagTest): boolean {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/environ`, "latin1");
  } catch {
    return false;
  }
  for (const entry of text.split("\0")) {
    if (entry.startsWith(`${PROCESS_TAG}=`) && test(entry.slice(PROCESS_TAG.length + 1))) return true;
  }
  return false;
}

/** Sends a signal, ignoring a process (or group) that is already gone. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** Freezes, then kills, the processes under the roots and those whose tag passes; returns their pids. */
function reap(roots: number[], test: TagTest): Set<number> {
  const stopped = new Set<number>();
  for (let round = 0; round < 100; round++) {
    const parents = processParents();
    const children = new Map<number, number[]>();
    for (const [pid, parent] of parents) {
      const list = children.get(parent) ?? [];
      list.push(pid);
      children.set(parent, list);
    }
    const queue = [...roots, ...stopped];
    for (const pid of parents.keys()) if (!stopped.has(pid) && tagged(pid, test)) queue.push(pid);
    const seen = new Set<number>();
    for (let pid = queue.pop(); pid !== undefined; pid = queue.pop()) {
      if (seen.has(pid)) continue;
      seen.add(pid);
      for (const child of children.get(pid) ?? []) queue.push(child);
    }
    const fresh = [...seen].filter(
      (pid) =>
        parents.has(pid) && !stopped.has(pid) && pid > 1 && pid !== process.pid && pid !== process.ppid,
    );
    if (fresh.length === 0) break;
    for (const pid of fresh) {
      signal(pid, "SIGSTOP");
      stopped.add(pid);
    }
  }
  for (const pid of stopped) signal(pid, "SIGKILL");
  return stopped;
}

function gone(pid: number): boolean {
  try {
    return /^[0-9]+ \(.*\) [ZX]/s.test(readFileSync(`/proc/${pid}/stat`, "latin1"));
  } catch {
    return true;
  }
}

function whenGone(pids: Set<number>, callback: () => void, deadline = Date.now() + 2000): void {
  if ([...pids].every(gone) || Date.now() > deadline) callback();
  else setTimeout(() => whenGone(pids, callback, deadline), 5);
}

function finish(entry: Running, code: number | null, signal: NodeJS.Signals | null): void {
  if (entry.finished) return;
  entry.finished = true;
  running.delete(entry.id);
  send({ type: "exit", id: entry.id, code, signal });
}

/** Kills a command's process group and every process it started; it ends once its own process has exited. */
function kill(entry: Running): void {
  if (entry.killed) return;
  entry.killed = true;
  const child = entry.child;
  const pid = child.pid as number;
  signal(-pid, "SIGSTOP");
  const own = `${entry.tag}:${entry.id}`;
  reap([pid], (tag) => tag === own);
  signal(-pid, "SIGKILL");
  // What is still in the pipe arrives within moments; then stop reading, whoever holds the pipe.
  const stopReading = () =>
    setTimeout(() => {
      child.stdout?.destroy();
      child.stderr?.destroy();
      finish(entry, child.exitCode, child.signalCode);
    }, 50);
  if (child.exitCode !== null || child.signalCode !== null) stopReading();
  else child.once("exit", stopReading);
}

function run(message: Extract<RunnerRequest, { type: "run" }>): void {
  let child: ChildProcess;
  tags.add(message.tag);
  const env = { ...message.env, [PROCESS_TAG]: `${message.tag}:${message.id}` };
  try {
    child = spawn(message.file, message.args, {
      cwd: message.cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
  } catch (error) {
    send({ type: "exit", id: message.id, error: String((error as Error)?.message || error) });
    return;
  }
  const entry: Running = { id: message.id, tag: message.tag, child, killed: false, finished: false };
  running.set(message.id, entry);
  const pass = (chunk: Buffer) => {
    if (!entry.finished) send({ type: "data", id: message.id, chunk });
  };
  child.stdout?.on("data", pass);
  child.stderr?.on("data", pass);
  child.on("error", (error) => {
    if (entry.finished) return;
    entry.finished = true;
    running.delete(message.id);
    send({ type: "exit", id: message.id, error: error.message });
  });
  child.on("close", (code, signal) => finish(entry, code, signal));
}

function reapEnvironment(message: Extract<RunnerRequest, { type: "reap" }>): void {
  tags.delete(message.tag);
  const roots: number[] = [];
  for (const entry of running.values()) {
    if (entry.tag === message.tag && entry.child.pid) {
      roots.push(entry.child.pid);
      kill(entry);
    }
  }
  const pids = reap(roots, (tag) => tag.startsWith(`${message.tag}:`));
  whenGone(pids, () => send({ type: "exit", id: message.id, code: 0, signal: null }));
}

// Ctrl-C on a terminal signals the whole foreground process group: swerun decides what it means.
process.on("SIGINT", () => {});
process.on("message", (message: RunnerRequest) => {
  if (message.type === "run") run(message);
  else if (message.type === "kill") {
    const entry = running.get(message.id);
    if (entry?.child.pid) kill(entry);
  } else if (message.type === "reap") reapEnvironment(message);
});
// swerun is gone (even by SIGKILL): kill everything its environments' commands started, then exit.
process.on("disconnect", () => {
  const roots: number[] = [];
  for (const entry of running.values()) {
    if (entry.child.pid) {
      roots.push(entry.child.pid);
      signal(-entry.child.pid, "SIGKILL");
    }
  }
  reap(roots, (tag) => tags.has(tag.slice(0, tag.lastIndexOf(":"))));
  process.exit(0);
});
