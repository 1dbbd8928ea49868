import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ExecOutput } from "../../messages.js";
import { packageRoot } from "../../util/package-root.js";
import { ActionKiller, INTERRUPTED } from "../action-killer.js";
import { ACTION_MARKER, failedOutput, killedOutput } from "../docker/exec.js";
import { exportSnippet, sessionCommand } from "../docker/session.js";
import { type ActionEnd, parseReadyLine, SCRIPT_END, scanActionOutput } from "../docker/session-framing.js";
import { OutputCollector } from "../output.js";
import type { KubeClient } from "./client.js";
import { KubernetesUnavailableError } from "./client.js";
import { ExecChannel, type ExecEnd, exitCodeOf } from "./exec-channel.js";
import { CLIENT_SLACK_SECONDS, killMarkedInPod, type PodActionRequest } from "./pod-exec.js";

/** A WebSocket ping this often keeps the session's connection alive and finds a dead one. */
const KEEPALIVE_MS = 20_000;
/** How many times one action's connection may drop (and be made again) before the session gives up. */
const MAX_RECONNECTS = 3;
/** Seconds a new connection's loop may take to say it is ready. */
const BOOT_SECONDS = 30;

const FORK_FAILED_OUTPUT = "swerun: cannot fork: the pod's shell session could not start the command";
const FORK_FAILED_REASON =
  "the pod's shell session could not fork to start it (is the pod out of processes? See its pids limit)";

let script: string | undefined;

function sessionScript(): string {
  script ??= readFileSync(join(packageRoot(), "shell", "pod-session.sh"), "utf8");
  return script;
}

/** What swerun writes to a new connection: a line setting the actions' folder `w`, that reads and evals the script. */
export function podSessionProgram(folder: string): string {
  const loader =
    `w='${folder}'; l=$(printf '\\nx'); l=\${l%x}; p=; ` +
    `while IFS= read -r x && [ "$x" != ${SCRIPT_END} ]; do p="$p$x$l"; done; eval "$p"`;
  const body = sessionScript();
  return `${loader}\n${body}${body.endsWith("\n") ? "" : "\n"}${SCRIPT_END}\n`;
}

/** The session cannot go on: its connection dropped more often than allowed, or it cannot be made again. */
export class PodSessionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PodSessionError";
  }
}

interface Pending {
  end: Buffer;
  collector: OutputCollector;
  held: Buffer;
  channel: ExecChannel;
  finish: (end: ActionEnd | { dropped: string }) => void;
}

/**
 * The actions of one pod through one long-lived pods/exec running swerun's session loop
 * (shell/pod-session.sh): an action costs a write and a read on an open WebSocket instead of a new exec's
 * handshake through the API server, the kubelet and the runtime. Pinged every KEEPALIVE_MS; every action
 * has a client deadline (its timeout plus CLIENT_SLACK_SECONDS). The loop keeps each action's output in a
 * file of the pod until the next request, so when the connection drops the session connects again and
 * asks for the same action: it is not run twice, and its output is not lost. Timeouts and interrupts kill
 * the action's processes from a second exec, as in exec mode.
 */
export class PodSession {
  /** The pod's uname fields, named as Python's `platform.uname()` names them; empty without uname. */
  platform: Record<string, string> = {};
  readonly #client: KubeClient;
  readonly #pod: string;
  readonly #interpreter: string[];
  readonly #folder = `/tmp/.swerun-session-${randomBytes(6).toString("hex")}`;
  /** Why the pod is lost, if it is (the environment's watch knows): then no reconnect is tried. */
  readonly #lost: () => string | undefined;
  /** Aborted when the pod is lost: the connection is dropped, so a running action stops waiting. */
  readonly #podLost: AbortSignal;
  #channel: ExecChannel | undefined;
  #booted = Buffer.alloc(0);
  #onReady: ((ready: boolean) => void) | undefined;
  #pending: Pending | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #closed = false;
  /** Connections made after the first, for the record. */
  reconnects = 0;

  private constructor(client: KubeClient, pod: string, interpreter: string[], podLost: AbortSignal) {
    this.#client = client;
    this.#pod = pod;
    this.#interpreter = interpreter;
    this.#podLost = podLost;
    this.#lost = () => (podLost.aborted ? String(podLost.reason) : undefined);
    podLost.addEventListener("abort", () => this.#channel?.terminate("the pod is lost"), { once: true });
  }

  /**
   * Starts the session in `pod`; undefined when its loop cannot run there (no /bin/sh, no `cat`, no writable
   * /tmp): the caller then runs one exec per action. Throws when the exec itself cannot be made.
   */
  static async open(
    client: KubeClient,
    pod: string,
    interpreter: string[],
    podLost: AbortSignal,
  ): Promise<PodSession | undefined> {
    const session = new PodSession(client, pod, interpreter, podLost);
    if (await session.#connect()) return session;
    session.close();
    return undefined;
  }

  /** Opens a connection and starts the loop on it; resolves whether the loop said it is ready. */
  async #connect(): Promise<boolean> {
    const channel = await ExecChannel.open(this.#client, this.#pod, sessionCommand(this.#interpreter), {
      stdin: true,
      keepaliveMs: KEEPALIVE_MS,
    });
    if (this.#closed || this.#podLost.aborted) {
      channel.close();
      return false;
    }
    this.#channel = channel;
    this.#booted = Buffer.alloc(0);
    const ready = new Promise<boolean>((resolve) => {
      this.#onReady = resolve;
    });
    channel.onData((stream, data) => {
      if (stream === 1) this.#onOutput(channel, data);
    });
    void channel.ended.then((end) => this.#onEnded(channel, end));
    channel.write(podSessionProgram(this.#folder));
    const timer = setTimeout(() => this.#ready(false), BOOT_SECONDS * 1000);
    const answered = await ready;
    clearTimeout(timer);
    if (answered) return true;
    channel.close();
    // The loop ran and exited (no /bin/sh, no `cat`, no writable /tmp): it cannot run here. An exec that
    // ended without an exit code never ran it (the container is not running yet, or is gone).
    const end = await Promise.race([
      channel.ended,
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5000)),
    ]);
    if (end && exitCodeOf(end.status) === undefined)
      throw new KubernetesUnavailableError(
        `pod ${this.#pod}: its session could not start: ${end.status?.message ?? end.reason}`,
      );
    return false;
  }

  #ready(ready: boolean): void {
    const wake = this.#onReady;
    this.#onReady = undefined;
    wake?.(ready);
  }

  #onOutput(channel: ExecChannel, chunk: Buffer): void {
    if (this.#onReady) {
      this.#booted = Buffer.concat([this.#booted, chunk]);
      const newline = this.#booted.indexOf(0x0a);
      if (newline < 0) return;
      const { ready, platform } = parseReadyLine(this.#booted.subarray(0, newline).toString("utf8"));
      if (ready) this.platform = platform;
      this.#ready(ready);
      return;
    }
    const pending = this.#pending;
    if (!pending || pending.channel !== channel) return;
    const scan = scanActionOutput(pending.held, chunk, pending.end);
    pending.collector.push(scan.output);
    pending.held = scan.held;
    if (!scan.end) return;
    this.#pending = undefined;
    pending.finish(scan.end);
  }

  #onEnded(channel: ExecChannel, end: ExecEnd): void {
    if (channel === this.#channel) this.#channel = undefined;
    this.#ready(false);
    const pending = this.#pending;
    if (!pending || pending.channel !== channel) return;
    this.#pending = undefined;
    pending.finish({ dropped: end.reason });
  }

  /** Runs one action; actions sent while one runs wait their turn. */
  run(request: PodActionRequest): Promise<ExecOutput> {
    const result = this.#queue.then(() => this.#runNow(request));
    this.#queue = result.catch(() => {});
    return result;
  }

  async #runNow(request: PodActionRequest): Promise<ExecOutput> {
    if (request.signal?.aborted)
      return killedOutput(INTERRUPTED, new OutputCollector(request.maxOutputBytes));
    const marker = randomBytes(8).toString("hex");
    const killer = new ActionKiller(
      request,
      () => killMarkedInPod(this.#client, this.#pod, marker, ACTION_MARKER),
      // Something that cleared its environment holds the output: end the output's `cat`.
      () => killMarkedInPod(this.#client, this.#pod, marker, "SWERUN_OUTPUT_OF").catch(() => {}),
    );
    let result: { ended: ActionEnd; collector: OutputCollector };
    try {
      result = await this.#attempts(request, marker);
    } finally {
      await killer.ended();
    }
    const { ended, collector } = result;
    if (killer.reason) return killedOutput(killer.reason, collector);
    if ("forkFailed" in ended) {
      collector.push(Buffer.from(`${FORK_FAILED_OUTPUT}\n`));
      return failedOutput(FORK_FAILED_REASON, collector);
    }
    const { output, truncated } = collector.result();
    return {
      output,
      returncode: ended.returncode,
      exception_info: "",
      extra: truncated ? { truncated } : {},
    };
  }

  /**
   * Sends the action (marker `marker`) until an answer comes: again, on a new connection, after each drop
   * (the loop runs it once and keeps its output), up to MAX_RECONNECTS times, unless the pod is lost.
   */
  async #attempts(
    request: PodActionRequest,
    marker: string,
  ): Promise<{ ended: ActionEnd; collector: OutputCollector }> {
    for (let attempt = 0; ; attempt++) {
      const channel = await this.#channelFor(attempt);
      // Each attempt collects afresh: the loop sends an action's whole output once it has ended.
      const collector = new OutputCollector(request.maxOutputBytes);
      const outcome = await this.#send(channel, request, marker, collector);
      if (!("dropped" in outcome)) return { ended: outcome, collector };
      const lost = this.#lost();
      if (lost) throw new PodSessionError(`pod ${this.#pod} is lost: ${lost}`);
      if (this.#closed) throw new PodSessionError(`the session of pod ${this.#pod} was closed`);
      if (attempt >= MAX_RECONNECTS)
        throw new PodSessionError(
          `the session of pod ${this.#pod} dropped ${attempt + 1} times during one action (last: ${outcome.dropped})`,
        );
    }
  }

  /** Writes one request on `channel`; resolves with the action's end, or why the connection dropped first. */
  #send(
    channel: ExecChannel,
    request: PodActionRequest,
    marker: string,
    collector: OutputCollector,
  ): Promise<ActionEnd | { dropped: string }> {
    const nonce = randomBytes(16).toString("hex");
    const exports = exportSnippet(request.env);
    return new Promise((resolve) => {
      // The client's deadline: an answer past the action's own timeout means the connection is dead.
      const seconds = request.timeoutSeconds + CLIENT_SLACK_SECONDS;
      const deadline = setTimeout(() => channel.terminate(`no answer within ${seconds} s`), seconds * 1000);
      this.#pending = {
        end: Buffer.from(`\n${nonce} `),
        collector,
        held: Buffer.alloc(0),
        channel,
        finish: (end) => {
          clearTimeout(deadline);
          resolve(end);
        },
      };
      const body = `${nonce} ${marker}\n${request.workdir}\n${exports ? `${exports}\n` : ""}${nonce}\n${request.command}\n${nonce}\n`;
      if (!channel.write(body)) channel.terminate("the connection closed before the request was sent");
    });
  }

  /** The open connection, or (after a drop) a new one; attempt 0 may reuse, later ones must reconnect. */
  async #channelFor(attempt: number): Promise<ExecChannel> {
    if (this.#channel?.open) return this.#channel;
    if (this.#closed) throw new PodSessionError(`the session of pod ${this.#pod} was closed`);
    if (attempt > 0 || !this.#channel) this.reconnects++;
    let ready = false;
    try {
      ready = await this.#connect();
    } catch (error) {
      const lost = this.#lost();
      throw new PodSessionError(
        `pod ${this.#pod}: ${lost ? `lost: ${lost}` : `its session could not connect again: ${(error as Error).message}`}`,
      );
    }
    if (!ready || !this.#channel)
      throw new PodSessionError(`pod ${this.#pod}: its session loop did not start again`);
    return this.#channel;
  }

  /** Closes the connection; the loop's stdin closes and it exits. Safe to call twice. */
  close(): void {
    this.#closed = true;
    this.#channel?.close();
  }
}
