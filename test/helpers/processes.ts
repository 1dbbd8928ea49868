import { readFileSync } from "node:fs";

/**
 * The fields of `/proc/<pid>/stat` after the command name (the state first, then the parent's pid, ...);
 * undefined once the process is gone.
 */
export function procStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** Whether a process still runs; a killed child that nobody reaped yet (a zombie) does not count. */
export function alive(pid: number): boolean {
  const state = procStat(pid)?.[0];
  return state !== undefined && state !== "Z" && state !== "X";
}
