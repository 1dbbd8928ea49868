import { randomBytes } from "node:crypto";
import type { Readable } from "node:stream";
import type Docker from "dockerode";
import type { ExecOutput } from "../../messages.js";
import { ActionKiller, INTERRUPTED } from "../action-killer.js";
import { OutputCollector } from "../output.js";

/** The variable that marks every process of one action, so a timeout can find and kill all of them. */
export const ACTION_MARKER = "SWERUN_ACTION_ID";

/** `exec "$0" "$@" 2>&1` points the command's stderr at its stdout, so both arrive merged in write order. */
const MERGE_STDERR = 'exec "$0" "$@" 2>&1';

/**
 * Kills every process whose environment holds the action's marker: the command, its children, and
 * background or `setsid` grandchildren that left its process group. Each pass stops them all first, so no
 * shell reports a killed child into the output, then kills them; passes repeat until one finds nothing,
 * so processes forked during a pass are caught by the next.
 */
export const KILL_MARKED = `m="$1"; n=0
while [ $n -lt 50 ]; do
  pids=""
  for d in /proc/[0-9]*; do
    grep -qaF "$m" "$d/environ" 2>/dev/null && pids="$pids \${d#/proc/}"
  done
  [ -z "$pids" ] && exit 0
  kill -STOP $pids 2>/dev/null; kill -KILL $pids 2>/dev/null
  n=$((n+1))
done`;

/** How swerun runs its own scripts in a container: `/bin/sh -c`, or the interpreter in an image without /bin/sh. */
export const BIN_SH = ["/bin/sh", "-c"];

/** What one action needs from the environment. */
export interface ExecRequest {
  /** The interpreter and the command, e.g. ["bash", "-lc", "ls"]. */
  argv: string[];
  /**
   * What runs swerun's kill script (default BIN_SH). Without /bin/sh (any other value) the command also
   * runs without the /bin/sh wrapper that merges its stderr into stdout: both are merged as they arrive.
   */
  shell?: string[];
  env: string[];
  workdir: string;
  timeoutSeconds: number;
  /** When the timeout kills the action, in ms from its start (default `timeoutSeconds`): less on a try again. */
  killAfterMs?: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
}

/**
 * Splits Docker's multiplexed stream (8-byte frame headers) and feeds the payloads to `onData`, saying
 * whether each came from stderr. Resolves when the stream ends.
 */
export function demultiplex(
  stream: Readable,
  onData: (chunk: Buffer, fromStderr: boolean) => void,
): Promise<void> {
  let pending = Buffer.alloc(0);
  let remaining = 0;
  let fromStderr = false;
  return new Promise((resolve, reject) => {
    stream.on("data", (chunk: Buffer) => {
      let data = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      pending = Buffer.alloc(0);
      while (data.length) {
        if (remaining > 0) {
          const take = Math.min(remaining, data.length);
          onData(data.subarray(0, take), fromStderr);
          remaining -= take;
          data = data.subarray(take);
          continue;
        }
        if (data.length < 8) {
          pending = Buffer.from(data);
          break;
        }
        fromStderr = data[0] === 2;
        remaining = data.readUInt32BE(4);
        data = data.subarray(8);
      }
    });
    stream.once("end", resolve);
    stream.once("close", resolve);
    stream.once("error", reject);
  });
}

/**
 * Runs in a second exec: kills every process whose environment holds `variable`=`marker` (by default the
 * action's marker: every process of the action, whatever process group it is in).
 */
export async function killMarked(
  container: Docker.Container,
  marker: string,
  variable = ACTION_MARKER,
  shell: string[] = BIN_SH,
): Promise<void> {
  const exec = await container.exec({
    Cmd: [...shell, KILL_MARKED, "swerun-kill", `${variable}=${marker}`],
    AttachStdout: true,
    AttachStderr: true,
  });
  const stream = (await exec.start({ hijack: false, stdin: false })) as Readable;
  await demultiplex(stream, () => {});
}

async function exitCode(exec: Docker.Exec): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const info = await exec.inspect();
    if (!info.Running && typeof info.ExitCode === "number") return info.ExitCode;
    if (attempt >= 200) return -1;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** The runtime's words when it could not start the exec's process for want of processes or memory. */
const NO_PROCESS =
  /read init-p: connection reset by peer|resource temporarily unavailable|cannot allocate memory/i;

/**
 * The container runtime's refusal to start an exec for want of processes, which it reports as the exec's output
 * with exit code 126: `OCI runtime exec failed: ... read init-p: connection reset by peer` (runc could not fork
 * in a container out of processes, e.g. while processes a timeout could not kill still hold its pids limit).
 * Other refusals (`chdir to cwd ... no such file or directory`) are no reason to wait.
 */
export function isRuntimeRefusal(output: ExecOutput): boolean {
  return (
    output.returncode === 126 &&
    output.output.startsWith("OCI runtime exec failed") &&
    NO_PROCESS.test(output.output)
  );
}

/**
 * Runs an action again while the container cannot start its process (`couldNotStart`: no process can start
 * in the container yet, e.g. while processes a timeout could not kill hold its pids limit), waiting 50 ms
 * doubling to 1 s, within the action's timeout: the action runs once the container has processes to spare,
 * or returns the last refusal when its timeout passes first (or the action is aborted). `attempt` gets the
 * milliseconds left of the timeout (a try's timeout message still names the whole timeout).
 */
export async function whileNoProcess(
  timeoutSeconds: number,
  signal: AbortSignal | undefined,
  couldNotStart: (output: ExecOutput) => boolean,
  attempt: (killAfterMs: number) => Promise<ExecOutput>,
): Promise<ExecOutput> {
  const deadline = Date.now() + timeoutSeconds * 1000;
  for (let wait = 50; ; wait = Math.min(2 * wait, 1000)) {
    const output = await attempt(Math.max(1, deadline - Date.now()));
    if (!couldNotStart(output) || Date.now() + wait >= deadline || signal?.aborted) return output;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/**
 * Runs one action as an exec in the container: stdout and stderr merged in order, the output capped and
 * decoded like the local environment's. A timeout or an abort kills every process of the action and
 * returns returncode -1 with the partial output. Errors of the daemon or the container are thrown.
 */
export async function runExec(container: Docker.Container, request: ExecRequest): Promise<ExecOutput> {
  if (request.signal?.aborted) return killedOutput(INTERRUPTED, new OutputCollector(0));
  const marker = randomBytes(8).toString("hex");
  const exec = await container.exec({
    Cmd:
      request.shell && request.shell !== BIN_SH
        ? request.argv
        : ["/bin/sh", "-c", MERGE_STDERR, ...request.argv],
    Env: [...request.env, `${ACTION_MARKER}=${marker}`],
    WorkingDir: request.workdir,
    AttachStdout: true,
    AttachStderr: true,
    AttachStdin: false,
    Tty: false,
  });
  const collector = new OutputCollector(request.maxOutputBytes);
  // Aborted while the exec was being created: it never starts.
  if (request.signal?.aborted) return killedOutput(INTERRUPTED, collector);
  let stream: Readable | undefined;
  const shell = request.shell ?? BIN_SH;
  const killer = new ActionKiller(
    request,
    () => killMarked(container, marker, ACTION_MARKER, shell),
    () => {
      stream?.destroy();
    },
  );
  try {
    stream = (await exec.start({ hijack: false, stdin: false })) as Readable;
    await demultiplex(stream, (chunk) => collector.push(chunk));
  } catch (error) {
    if (!killer.reason) throw error;
  } finally {
    await killer.ended();
  }
  if (killer.reason) return killedOutput(killer.reason, collector);
  const { output, truncated } = collector.result();
  return {
    output,
    returncode: await exitCode(exec),
    exception_info: "",
    extra: truncated ? { truncated } : {},
  };
}

/** The output of an action that was killed: what it printed so far, returncode -1, and why. */
export function killedOutput(reason: string, collector: OutputCollector): ExecOutput {
  return failedOutput(
    reason,
    collector,
    reason.startsWith("Command timed out") ? "TimeoutError" : "ExecutionError",
  );
}

/** The output of an action that failed to run or was ended: what it printed, returncode -1, and why. */
export function failedOutput(
  reason: string,
  collector: OutputCollector,
  exceptionType = "ExecutionError",
): ExecOutput {
  const { output, truncated } = collector.result();
  const extra: Record<string, unknown> = {};
  if (truncated) extra.truncated = truncated;
  extra.exception_type = exceptionType;
  return {
    output,
    returncode: -1,
    exception_info: `An error occurred while executing the command: ${reason}`,
    extra,
  };
}
