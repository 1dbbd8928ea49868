/**
 * Finds and kills processes on Linux through /proc: a command's process tree, and every process whose
 * environment carries a tag (which finds those that left the tree by double-forking and the process group
 * with setsid). Found processes are frozen (SIGSTOP) and the scan repeats until it finds nothing new, so a
 * tree that forks while being killed is caught whole; then all get SIGKILL. Without /proc (not Linux) it
 * finds only the roots; spawner.ts kills their process groups too. A scan reads only the processes created
 * since the first command when the pids tell which those are (a machine may run thousands of others).
 */
import { closeSync, openSync, readdirSync, readSync } from "node:fs";

/** Every command's environment carries `SWERUN_PROCESS_TAG=<tag>`; its descendants inherit it. */
export const PROCESS_TAG = "SWERUN_PROCESS_TAG";

/** A test on the part of a process's tag after `=`. */
export type TagTest = (tag: string) => boolean;

/** One buffer for every /proc read: readFileSync costs 3-6x more there (the files have no size to go by). */
const buffer = Buffer.allocUnsafe(16384);

/** A /proc file as latin1 text (read whole, in chunks when it is longer than the buffer). */
function readProc(path: string): string {
  const fd = openSync(path, "r");
  try {
    let text = "";
    for (;;) {
      const count = readSync(fd, buffer, 0, buffer.length, null);
      if (count === 0) return text;
      text += buffer.toString("latin1", 0, count);
    }
  } finally {
    closeSync(fd);
  }
}

/** When this process started (clock ticks after boot, /proc/<pid>/stat's 22nd field); 0 without /proc. */
let ownStart: number | undefined;

function startOf(stat: string): number {
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
}

/** Where pid allocation stood before the first command: forks since boot, and the last pid given. */
type Allocation = { forks: number; last: number };
let mark: Allocation | undefined;
let pidMax: number | undefined;

function allocation(): Allocation | undefined {
  try {
    const last = Number(readProc("/proc/loadavg").trim().split(" ").at(-1));
    const forks = Number(/^processes (\d+)$/m.exec(readProc("/proc/stat"))?.[1]);
    return Number.isInteger(last) && Number.isInteger(forks) ? { forks, last } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Notes where pid allocation stands (once; before the first command starts): a process created since then
 * has a pid the kernel gave after it, which lets a scan skip the machine's older processes.
 */
export function markNewProcesses(): void {
  mark ??= allocation();
}

/**
 * A test for the pids that processes created since the mark can have, or undefined when it cannot tell.
 * The kernel gives the next free pid after the last one, wrapping to 300 past pid_max: until it has gone
 * a whole lap since the mark (more forks, plus the live pids it skips, than pid_max), every process
 * created since has a pid between the mark's last pid and the current last pid, going round.
 */
function newPids(live: number): ((pid: number) => boolean) | undefined {
  const now = allocation();
  try {
    pidMax ??= Number(readProc("/proc/sys/kernel/pid_max"));
  } catch {
    pidMax = 0;
  }
  if (!mark || !now || !pidMax || now.forks - mark.forks + live >= pidMax - 300) return undefined;
  const from = mark.last;
  const to = now.last;
  return from <= to ? (pid) => pid > from && pid <= to : (pid) => pid > from || pid <= to;
}

/**
 * The processes on this machine that can carry a tag this process gave, as pid -> parent pid (empty
 * without /proc): those created since the mark when that can be told (see newPids), else every process,
 * with those started after this process in `younger` (only their environment is read).
 */
function processParents(): { parents: Map<number, number>; younger: Set<number> } {
  const parents = new Map<number, number>();
  const younger = new Set<number>();
  try {
    ownStart ??= startOf(readProc("/proc/self/stat"));
  } catch {
    ownStart = 0;
  }
  let names: string[] = [];
  try {
    names = readdirSync("/proc");
  } catch {
    return { parents, younger };
  }
  const isNew = newPids(names.length);
  for (const name of names) {
    const first = name.charCodeAt(0);
    if (first < 48 || first > 57 || (isNew && !isNew(Number(name)))) continue;
    try {
      const stat = readProc(`/proc/${name}/stat`);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parents.set(Number(name), Number(fields[1]));
      if (Number(fields[19]) >= ownStart) younger.add(Number(name));
    } catch {
      // The process ended while the list was read.
    }
  }
  return { parents, younger };
}

/** Whether the process's environment (as it was when its program started) has a tag that passes. */
function tagged(pid: number, test: TagTest): boolean {
  let text: string;
  try {
    text = readProc(`/proc/${pid}/environ`);
  } catch {
    return false;
  }
  for (const entry of text.split("\0")) {
    if (entry.startsWith(`${PROCESS_TAG}=`) && test(entry.slice(PROCESS_TAG.length + 1))) return true;
  }
  return false;
}

/** Sends a signal, ignoring a process (or group) that is already gone. */
export function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** The processes under the roots (and the roots, and those in `known`) and those whose tag passes. */
function scan(
  { parents, younger }: { parents: Map<number, number>; younger: Set<number> },
  roots: number[],
  known: Set<number>,
  test: TagTest,
): Set<number> {
  const children = new Map<number, number[]>();
  for (const [pid, parent] of parents) {
    const list = children.get(parent) ?? [];
    list.push(pid);
    children.set(parent, list);
  }
  const queue = [...roots, ...known];
  for (const pid of younger) if (!known.has(pid) && tagged(pid, test)) queue.push(pid);
  const seen = new Set<number>();
  for (let pid = queue.pop(); pid !== undefined; pid = queue.pop()) {
    if (seen.has(pid)) continue;
    seen.add(pid);
    for (const child of children.get(pid) ?? []) queue.push(child);
  }
  return seen;
}

/** Freezes, then kills, the processes under the roots and those whose tag passes; returns their pids. */
export function reap(roots: number[], test: TagTest): Set<number> {
  const stopped = new Set<number>();
  for (let round = 0; round < 100; round++) {
    const processes = processParents();
    const parents = processes.parents;
    const fresh = [...scan(processes, roots, stopped, test)].filter(
      (pid) => parents.has(pid) && !stopped.has(pid) && pid > 1 && pid !== process.pid,
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
    return /^[0-9]+ \(.*\) [ZX]/s.test(readProc(`/proc/${pid}/stat`));
  } catch {
    return true;
  }
}

/** Resolves once every process is gone (or a zombie), or after two seconds. */
export function whenGone(pids: Set<number>, deadline = Date.now() + 2000): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if ([...pids].every(gone) || Date.now() > deadline) resolve();
      else setTimeout(check, 5);
    };
    check();
  });
}
