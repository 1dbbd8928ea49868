import os from "node:os";
import type { ExecOutput } from "../messages.js";
import type { ExecuteOptions } from "./environment.js";
import { OutputCollector } from "./output.js";
import { type SpawnRequest, spawnCommand } from "./spawner.js";

/** mini-swe-agent's (Python's) words for a command that timed out; its process group is killed. */
export function timeoutMessage(command: string, timeout: number): string {
  return `Command '${command}' timed out after ${timeout} seconds`;
}

/** One action as a process on this machine (the local environment's, or bubblewrap's sandbox). */
export interface CommandRun extends Omit<SpawnRequest, "onData"> {
  /** The action's command, for the timeout message. */
  command: string;
  /** Seconds before the command's processes are killed. */
  timeout: number;
  maxOutputBytes: number;
  signal?: ExecuteOptions["signal"];
}

/**
 * Runs a command as a fresh process group and returns its output as data: stdout and stderr as they
 * arrive, cut in the middle past `maxOutputBytes`. A timeout or an abort kills every process it started
 * (returncode -1 with mini-swe-agent's exception fields); a death by signal is a negative exit code.
 */
export async function runCommand(run: CommandRun): Promise<ExecOutput> {
  const collector = new OutputCollector(run.maxOutputBytes);
  const child = spawnCommand({ ...run, onData: (chunk) => collector.push(chunk) });
  let killedBecause = "";
  const killGroup = (reason: string) => {
    if (killedBecause) return;
    killedBecause = reason;
    child.kill();
  };
  const timedOut = timeoutMessage(run.command, run.timeout);
  const timer = setTimeout(() => killGroup(timedOut), run.timeout * 1000);
  const onAbort = () => killGroup("Command interrupted by the user; its process group was killed");
  run.signal?.addEventListener("abort", onAbort, { once: true });
  if (run.signal?.aborted) onAbort();
  const exit = await child.done;
  clearTimeout(timer);
  run.signal?.removeEventListener("abort", onAbort);
  const { output, truncated } = collector.result();
  const extra: Record<string, unknown> = {};
  if (truncated) extra.truncated = truncated;
  if (killedBecause || exit.error) {
    const reason = killedBecause || `Could not run the command: ${exit.error}`;
    extra.exception_type = killedBecause === timedOut ? "TimeoutExpired" : "ExecutionError";
    if (killedBecause === timedOut) extra.exception = reason;
    return {
      output,
      returncode: -1,
      exception_info: `An error occurred while executing the command: ${reason}`,
      extra,
    };
  }
  const returncode = exit.code ?? -(os.constants.signals[exit.signal ?? "SIGKILL"] ?? 9);
  return { output, returncode, exception_info: "", extra };
}
