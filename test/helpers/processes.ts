import { readFileSync } from "node:fs";

/** Whether a process still runs; a killed child that nobody reaped yet (a zombie) does not count. */
export function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) [ZX]/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}
