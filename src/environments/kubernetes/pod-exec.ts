import { randomBytes } from "node:crypto";
import type { ExecOutput } from "../../messages.js";
import { ActionKiller, INTERRUPTED } from "../action-killer.js";
import { ACTION_MARKER, KILL_MARKED, killedOutput } from "../docker/exec.js";
import { exportSnippet } from "../docker/session.js";
import { OutputCollector } from "../output.js";
import type { KubeClient } from "./client.js";
import { ExecChannel, exitCodeOf } from "./exec-channel.js";

/** Seconds past an action's timeout before swerun stops waiting for the pod to answer at all. */
export const CLIENT_SLACK_SECONDS = 60;

/** What one action asks of a pod. */
export interface PodActionRequest {
  command: string;
  /** NAME=value entries exported for this action only. */
  env: string[];
  workdir: string;
  timeoutSeconds: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  /** Aborted when the pod is lost: the action stops waiting for it (and throws). */
  podLost?: AbortSignal;
}

/** Runs KILL_MARKED in a second exec: kills every process of the pod whose environment holds `variable=marker`. */
export async function killMarkedInPod(
  client: KubeClient,
  pod: string,
  marker: string,
  variable = ACTION_MARKER,
): Promise<void> {
  const channel = await ExecChannel.open(client, pod, [
    "/bin/sh",
    "-c",
    KILL_MARKED,
    "swerun-kill",
    `${variable}=${marker}`,
  ]);
  const timer = setTimeout(() => channel.terminate("the kill took more than 30 s"), 30_000);
  await channel.ended;
  clearTimeout(timer);
}

/** The shell line an exec runs an action with: cd, the action's variables, the marker, then the interpreter. */
function execScript(request: PodActionRequest, marker: string): string {
  const cwd = `'${request.workdir.replaceAll("'", "'\\''")}'`;
  const exports = exportSnippet(request.env);
  return `cd ${cwd} || exit 1\n${exports ? `${exports}\n` : ""}${ACTION_MARKER}=${marker}; export ${ACTION_MARKER}\nexec "$0" "$@" 2>&1`;
}

/**
 * Runs one action as a pods/exec of its own (exec_mode: exec): stdout and stderr merged, the output capped
 * and decoded like the other environments'. A timeout or an abort kills every process of the action and
 * returns returncode -1 with the partial output. A connection that ends without the exec's Status (or
 * does not answer by the timeout plus CLIENT_SLACK_SECONDS) is thrown: the pod or the cluster failed.
 */
export async function runPodExec(
  client: KubeClient,
  pod: string,
  interpreter: string[],
  request: PodActionRequest,
): Promise<ExecOutput> {
  const collector = new OutputCollector(request.maxOutputBytes);
  if (request.signal?.aborted) return killedOutput(INTERRUPTED, collector);
  const marker = randomBytes(8).toString("hex");
  const [program = "bash", ...args] = interpreter;
  const channel = await ExecChannel.open(client, pod, [
    "/bin/sh",
    "-c",
    execScript(request, marker),
    program,
    ...args,
    request.command,
  ]);
  channel.onData((_stream, data) => collector.push(data));
  const killer = new ActionKiller(
    request,
    () => killMarkedInPod(client, pod, marker, ACTION_MARKER),
    () => channel.terminate("the action could not be killed"),
  );
  const deadline = setTimeout(
    () =>
      channel.terminate(`the pod did not answer within ${request.timeoutSeconds + CLIENT_SLACK_SECONDS} s`),
    (request.timeoutSeconds + CLIENT_SLACK_SECONDS) * 1000,
  );
  const onLost = () => channel.terminate("the pod is lost");
  request.podLost?.addEventListener("abort", onLost, { once: true });
  if (request.podLost?.aborted) onLost();
  const end = await channel.ended;
  clearTimeout(deadline);
  request.podLost?.removeEventListener("abort", onLost);
  await killer.ended();
  if (killer.reason) return killedOutput(killer.reason, collector);
  const code = exitCodeOf(end.status);
  if (code === undefined) {
    const said = end.status?.message ? `: ${end.status.message}` : "";
    throw new PodExecError(`exec in pod ${pod} ended without an exit code (${end.reason}${said})`);
  }
  const { output, truncated } = collector.result();
  return { output, returncode: code, exception_info: "", extra: truncated ? { truncated } : {} };
}

/** An exec that ended without its command's exit code: its connection or the pod failed. */
export class PodExecError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PodExecError";
  }
}
