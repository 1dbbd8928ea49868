import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Duplex } from "node:stream";
import type Docker from "dockerode";
import { durationSeconds } from "../../config/docker.js";
import type { ExecOutput } from "../../messages.js";
import { packageRoot } from "../../util/package-root.js";
import { ActionKiller, INTERRUPTED } from "../action-killer.js";
import { OutputCollector } from "../output.js";
import { ACTION_MARKER, demultiplex, failedOutput, killedOutput, killMarked } from "./exec.js";
import {
  type ActionEnd,
  PERL_END,
  parseReadyLine,
  SCRIPT_END,
  type SessionLoop,
  scanActionOutput,
} from "./session-framing.js";

/** Longer commands run as an exec of their own in the shell loop (which reads them more slowly). */
export const SESSION_MAX_COMMAND = 32_768;

/** Marks the `cat` that carries one action's output, for when the action's own processes cannot be found. */
const OUTPUT_MARKER = "SWERUN_OUTPUT_OF";

/** The session loops, shipped as scripts of their own (a shell one and a Perl one); each read once. */
const scripts = new Map<string, string>();

/**
 * A session script without its comment lines and blank lines (the shell loop reads it a byte at a time,
 * and the comments are two thirds of it). No line of a quoted string in either script starts with `#`.
 */
function loopScript(name: "docker-session.sh" | "docker-session.pl"): string {
  let script = scripts.get(name);
  if (script === undefined) {
    script = readFileSync(join(packageRoot(), "shell", name), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "" && !line.trimStart().startsWith("#"))
      .join("\n");
    scripts.set(name, script);
  }
  return script;
}

/** The command line of the container's PID 1: it reads its program as the first line of stdin. */
export function sessionCommand(interpreter: string[]): string[] {
  return ["/bin/sh", "-c", 'IFS= read -r l && eval "$l"', "swerun-session", ...interpreter];
}

/**
 * What swerun writes to a new session: a line that, where perl starts, execs perl with a loader that reads
 * the rest (the Perl loop up to PERL_END, then the shell loop up to SCRIPT_END) and evals the Perl loop with
 * the lifetime in seconds, keep and the lifetime as configured, the shell loop's text as `$shell_loop` (the
 * Perl loop execs /bin/sh with it where it cannot run); elsewhere it skips the Perl loop, sets the shell
 * loop's `lifetime` (a `sleep` duration, like the `sleep` container's) and `keep` (sleep out the lifetime
 * when stdin closes, so the container can be entered), reads the shell loop and evals it. Then the Perl
 * loop, PERL_END, the shell loop and SCRIPT_END.
 */
export function sessionProgram(lifetime: string, keep: boolean): string {
  // What the loader read past SCRIPT_END (nothing, as swerun waits for the ready line) is the loop's `$rest`.
  const end = `\\n${SCRIPT_END}\\n`;
  const perlEnd = `\\n${PERL_END}\\n`;
  const boot =
    `my $s = ""; while (index($s, "${end}") < 0) { sysread(STDIN, $s, 65536, length $s) or exit 3 } ` +
    `my ($p, $e) = (index($s, "${perlEnd}"), index($s, "${end}")); our $rest = substr($s, $e + length "${end}"); ` +
    `our $shell_loop = substr($s, $p + length "${perlEnd}", $e - $p - length "${perlEnd}"); ` +
    `eval substr($s, 0, $p); print STDERR $@; exit 3`;
  const perl =
    "if command -v perl >/dev/null 2>&1 && perl -e 1 >/dev/null 2>&1; then " +
    `exec perl -e '${boot}' ${durationSeconds(lifetime)} ${keep ? 1 : 0} ${lifetime} "$@"; fi; ` +
    `while IFS= read -r x && [ "$x" != ${PERL_END} ]; do :; done; `;
  const loader =
    `lifetime=${lifetime} keep=${keep ? "1" : ""}; ${perl}l=$(printf '\\nx'); l=\${l%x}; p=; ` +
    `while IFS= read -r x && [ "$x" != ${SCRIPT_END} ]; do p="$p$x$l"; done; eval "$p"`;
  const [perlLoop, shellLoop] = [loopScript("docker-session.pl"), loopScript("docker-session.sh")];
  return `${loader}\n${perlLoop}\n${PERL_END}\n${shellLoop}\n${SCRIPT_END}\n`;
}

/** One action's request in the Perl loop's framing: a head line with the byte lengths, then the bytes. */
export function perlRequest(nonce: string, marker: string, request: SessionRequest): Buffer {
  const cwd = Buffer.from(request.workdir);
  const env = Buffer.from(request.env.map((entry) => `${entry}\0`).join(""));
  const command = Buffer.from(request.command);
  const head = `${nonce} ${marker} ${cwd.length} ${env.length} ${command.length}\n`;
  return Buffer.concat([Buffer.from(head), cwd, env, command]);
}

/** `export NAME='value'` lines for the shell, values single-quoted (a quote becomes '\\''). */
export function exportSnippet(env: string[]): string {
  return env
    .map((entry) => {
      const at = entry.indexOf("=");
      return `export ${entry.slice(0, at)}='${entry.slice(at + 1).replaceAll("'", "'\\''")}'`;
    })
    .join("\n");
}

/** The session's shell has ended, and its container with it. */
export class SessionEndedError extends Error {}

/** What one action asks of the session. */
export interface SessionRequest {
  command: string;
  /** NAME=value entries exported for this action only. */
  env: string[];
  workdir: string;
  timeoutSeconds: number;
  /** When the timeout kills the action, in ms from its start (default `timeoutSeconds`): less on a try again. */
  killAfterMs?: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
}

interface Pending {
  end: Buffer;
  collector: OutputCollector;
  held: Buffer;
  finish: (end: ActionEnd | undefined) => void;
}

/** The output of an action the loop could not fork to run (the container is out of processes), and why. */
const FORK_FAILED_OUTPUT = "swerun: cannot fork: the container's shell session could not start the command";
const FORK_FAILED_REASON =
  "the container's shell session could not fork to start it (is the container out of processes? See its pids limit)";

/** Whether the session's shell could not fork to start the action (the container was out of processes). */
export function isForkFailure(output: ExecOutput): boolean {
  return output.returncode === -1 && output.exception_info.endsWith(FORK_FAILED_REASON);
}

/**
 * The container's PID 1: a loop that runs every action of the environment (shell/docker-session.pl where
 * the image has perl, shell/docker-session.sh elsewhere), attached to swerun by the container's stdin and
 * stdout. A step costs a write and a read on an open connection instead of an exec's round trips through
 * the daemon and the container runtime (about 60 ms each on the development machine; a session step is a
 * few ms), and a container costs no exec at all. Being PID 1, the loop ignores the signals a command sends
 * it, and the container ends when swerun's connection closes. Timeouts and interrupts kill the action's
 * processes as `runExec` does.
 */
export class DockerSession {
  readonly #container: Docker.Container;
  readonly #stream: Duplex;
  /** The container's uname fields, named as Python's `platform.uname()` names them; empty without uname. */
  platform: Record<string, string> = {};
  /** Which loop runs the actions (known once `begin` resolved true). */
  #loop: SessionLoop = "sh";
  #alive = true;
  #booting = true;
  #readyWaiters: Array<(ready: boolean) => void> = [];
  #booted = Buffer.alloc(0);
  #pending: Pending | undefined;
  /** An action given up on while its output stays open: what it prints is dropped until its end line. */
  #abandoned: { end: Buffer; held: Buffer } | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(container: Docker.Container, stream: Duplex) {
    this.#container = container;
    this.#stream = stream;
    void demultiplex(stream, (chunk, fromStderr) => {
      if (!fromStderr) this.#onOutput(chunk);
    })
      .catch(() => {})
      .finally(() => {
        this.#alive = false;
        for (const wake of this.#readyWaiters.splice(0)) wake(false);
        const pending = this.#pending;
        this.#pending = undefined;
        // The shell is gone: what was held back as a possible end line is output.
        pending?.collector.push(pending.held);
        pending?.finish(undefined);
      });
    stream.on("error", () => {});
  }

  /**
   * Attaches to a container created with `sessionCommand` as its command and stdin open, before it starts,
   * so nothing it prints is missed. Daemon errors are thrown with their status code.
   */
  static async attach(container: Docker.Container): Promise<DockerSession> {
    const stream = (await container.attach({
      stream: true,
      stdin: true,
      stdout: true,
      stderr: true,
      hijack: true,
    })) as Duplex;
    return new DockerSession(container, stream);
  }

  /**
   * Once the container runs: sends the session's program and resolves true when the shell answers, false
   * when it cannot run it or does not answer in `timeoutMs` (the caller then falls back to one exec per
   * action, in a container of its own).
   */
  async begin(options: { lifetime: string; keep: boolean; timeoutMs?: number }): Promise<boolean> {
    const ready = new Promise<boolean>((resolve) => this.#readyWaiters.push(resolve));
    this.#stream.write(sessionProgram(options.lifetime, options.keep));
    let timer: NodeJS.Timeout | undefined;
    const answered = await Promise.race([
      ready,
      new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), options.timeoutMs ?? 10_000);
      }),
    ]);
    clearTimeout(timer);
    if (!answered) this.close();
    return answered;
  }

  /**
   * False while the session is still busy with an action given up on (a timeout could not end it, as
   * when the container is out of processes and no kill can start): the caller runs actions as execs
   * meanwhile. Also false once the session has ended (see `alive`).
   */
  get available(): boolean {
    return this.#alive && !this.#abandoned;
  }

  /**
   * Whether the session takes any cwd and command: the Perl loop reads its requests by length; the shell
   * loop reads them a line at a time (no newline in the cwd, commands up to SESSION_MAX_COMMAND).
   */
  get readsAnyRequest(): boolean {
    return this.#loop === "perl";
  }

  /** False once the shell has ended (and its container with it) or the connection was closed. */
  get alive(): boolean {
    return this.#alive;
  }

  /** Runs one action; actions sent while one runs wait their turn. */
  run(request: SessionRequest): Promise<ExecOutput> {
    const result = this.#queue.then(() => this.#runNow(request));
    this.#queue = result.catch(() => {});
    return result;
  }

  async #runNow(request: SessionRequest): Promise<ExecOutput> {
    const collector = new OutputCollector(request.maxOutputBytes);
    if (request.signal?.aborted) return killedOutput(INTERRUPTED, collector);
    if (!this.#alive) throw new SessionEndedError("the container's shell session has ended");
    // 64 bits: the session reads each request a byte at a time.
    const nonce = randomBytes(8).toString("hex");
    const marker = randomBytes(8).toString("hex");
    const end = Buffer.from(`\n${nonce} `);
    const killer = new ActionKiller(
      request,
      () => killMarked(this.#container, marker, ACTION_MARKER),
      async () => {
        // Something that left the action's marker behind holds the output: the Perl loop is told to stop
        // reading it; the shell loop's `cat` that reads it is killed. Either way the loop goes on to the
        // next action; that process keeps running, as it would after an exec.
        if (this.#loop === "perl") this.#stream.write(`stop ${nonce}\n`);
        else await killMarked(this.#container, marker, OUTPUT_MARKER).catch(() => {});
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const pending = this.#pending;
        if (pending?.end !== end) return;
        // Not even that worked (no process can start in the container): give the action up, as an exec's
        // stream is given up; the session comes back when its output ends.
        this.#pending = undefined;
        this.#abandoned = { end, held: pending.held };
        pending.finish(undefined);
      },
    );
    const ended = await new Promise<ActionEnd | undefined>((resolve) => {
      this.#pending = { end, collector, held: Buffer.alloc(0), finish: resolve };
      if (this.#loop === "perl") {
        this.#stream.write(perlRequest(nonce, marker, request));
        return;
      }
      const exports = exportSnippet(request.env);
      this.#stream.write(
        `${nonce} ${marker}\n${request.workdir}\n${exports ? `${exports}\n` : ""}${nonce}\n${request.command}\n${nonce}\n`,
      );
    });
    await killer.ended();
    if (killer.reason) return killedOutput(killer.reason, collector);
    if (ended && "forkFailed" in ended) {
      collector.push(Buffer.from(`${FORK_FAILED_OUTPUT}\n`));
      return failedOutput(FORK_FAILED_REASON, collector);
    }
    const { output, truncated } = collector.result();
    return {
      output,
      // The shell ended during the action (the container stopped): its exit code stands for the command's.
      returncode: ended ? ended.returncode : await this.#shellExitCode(),
      exception_info: "",
      extra: truncated ? { truncated } : {},
    };
  }

  #onOutput(chunk: Buffer): void {
    if (this.#booting) {
      this.#booted = Buffer.concat([this.#booted, chunk]);
      const newline = this.#booted.indexOf(0x0a);
      if (newline < 0) return;
      this.#booting = false;
      const { ready, loop, platform } = parseReadyLine(this.#booted.subarray(0, newline).toString("utf8"));
      this.platform = platform;
      this.#loop = loop;
      for (const wake of this.#readyWaiters.splice(0)) wake(ready);
      if (!ready) this.close();
      return;
    }
    const abandoned = this.#abandoned;
    if (abandoned) {
      const scan = scanActionOutput(abandoned.held, chunk, abandoned.end);
      abandoned.held = scan.held;
      if (scan.end) this.#abandoned = undefined;
      return;
    }
    const pending = this.#pending;
    if (!pending) return;
    const scan = scanActionOutput(pending.held, chunk, pending.end);
    pending.collector.push(scan.output);
    pending.held = scan.held;
    if (!scan.end) return;
    this.#pending = undefined;
    pending.finish(scan.end);
  }

  async #shellExitCode(): Promise<number> {
    for (let attempt = 0; attempt < 100; attempt++) {
      const info = await this.#container.inspect().catch(() => undefined);
      if (!info) return -1;
      if (!info.State.Running) return info.State.ExitCode;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return -1;
  }

  /** Closes the connection; the shell's stdin closes and it exits (or, with `keep`, sleeps). Safe to call twice. */
  close(): void {
    this.#alive = false;
    this.#stream.destroy();
  }
}
