import { randomBytes } from "node:crypto";
import type { Duplex } from "node:stream";
import type Docker from "dockerode";
import type { ExecOutput } from "../../messages.js";
import { OutputCollector } from "../output.js";
import { ACTION_MARKER, ActionKiller, demultiplex, INTERRUPTED, killedOutput, killMarked } from "./exec.js";

/** Marks the `cat` that carries one action's output, for when the action's own processes cannot be found. */
const OUTPUT_MARKER = "SWERUN_OUTPUT_OF";

/** The first line of the session's output: this, then the container's uname -s -n -r -v -m, tab-separated. */
const READY = "swerun-session ready";

/** The command line of the container's PID 1: it reads its program (`loop`) as the first line of stdin. */
export function sessionCommand(interpreter: string[]): string[] {
  return ["/bin/sh", "-c", 'IFS= read -r l && eval "$l"', "swerun-session", ...interpreter];
}

/**
 * The session's program, one line. It ends the container after `lifetime` (a `sleep` duration, like the
 * `sleep` container's; a timer process sends it SIGALRM, the only signal that ends it) and, when stdin
 * closes (swerun ended or died), exits, or with `keep` sleeps out the lifetime so the container can be
 * entered. A request is a line "nonce marker", the cwd, the lines of a
 * snippet exporting the action's variables, a line holding only the nonce, the command's lines, and the
 * nonce again; all read with shell builtins (no process per request). The interpreter runs the command
 * in a new process session, stdin from /dev/null, stderr merged into stdout, the action's marker in its
 * environment; the output goes through `cat`, which ends when every process holding it has closed it, as
 * a `docker exec` stream does. Then the loop prints "\n<nonce> <exit code>\n". The nonce is never in the
 * command's environment, so no output can fake the end of an action.
 */
function loop(lifetime: string, keep: boolean): string {
  return [
    "command -v cat >/dev/null 2>&1 || exit 3; exec 3>&1; s=; command -v setsid >/dev/null 2>&1 && s=setsid;",
    `trap 'exit 0' ALRM; trap : HUP INT QUIT TERM USR1 USR2; (sleep ${lifetime}; kill -ALRM $$) >/dev/null 2>&1 3>&- & `,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax
    "l=$(printf '\\nx'); l=${l%x};",
    `printf '${READY}\\t%s\\t%s\\t%s\\t%s\\t%s\\n' "$(uname -s)" "$(uname -n)" "$(uname -r)" "$(uname -v)" "$(uname -m)";`,
    "while IFS=' ' read -r n m && IFS= read -r d && e= && c=; do",
    `while IFS= read -r x && [ "$x" != "$n" ]; do e="$e$x$l"; done;`,
    `IFS= read -r c; while IFS= read -r x && [ "$x" != "$n" ]; do c="$c$l$x"; done;`,
    `r=$( { { ( cd "$d" && eval "$e" && ${ACTION_MARKER}=$m exec $s "$@" "$c" ) </dev/null 2>&1 3>&- 4>&-; echo $? >&4; } | ${OUTPUT_MARKER}=$m cat >&3 4>&-; } 4>&1 ); x=$?;`,
    `printf '\\n%s %s\\n' "$n" "\${r:-$x}"; done;`,
    keep ? `exec sleep ${lifetime}` : "exit 0",
  ].join(" ");
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
  maxOutputBytes: number;
  signal?: AbortSignal;
}

interface Pending {
  end: Buffer;
  collector: OutputCollector;
  unread: Buffer;
  finish: (returncode: number | undefined) => void;
}

/**
 * The container's PID 1: a shell that runs every action of the environment, attached to swerun by the
 * container's stdin and stdout. A step costs a write and a read on an open connection instead of an exec's
 * round trips through the daemon and the container runtime (about 60 ms each on the development machine;
 * a session step is a few ms), and a container costs no exec at all. Being PID 1, the shell ignores the
 * signals a command sends it, and the container ends when swerun's connection closes. Timeouts and
 * interrupts kill the action's processes as `runExec` does.
 */
export class DockerSession {
  readonly #container: Docker.Container;
  readonly #stream: Duplex;
  /** The container's uname fields, named as Python's `platform.uname()` names them; empty without uname. */
  platform: Record<string, string> = {};
  #alive = true;
  #booting = true;
  #readyWaiters: Array<(ready: boolean) => void> = [];
  #booted = Buffer.alloc(0);
  #pending: Pending | undefined;
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
        pending?.collector.push(pending.unread);
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
    this.#stream.write(`${loop(options.lifetime, options.keep)}\n`);
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
    const nonce = randomBytes(16).toString("hex");
    const marker = randomBytes(8).toString("hex");
    const end = Buffer.from(`\n${nonce} `);
    const killer = new ActionKiller(this.#container, marker, request, async () => {
      // Something that left the action's marker behind holds the output: end the output's `cat`, so the
      // loop goes on to the next action; that process keeps running, as it would after an exec.
      await killMarked(this.#container, marker, OUTPUT_MARKER).catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      if (this.#pending?.end === end) this.close();
    });
    const returncode = await new Promise<number | undefined>((resolve) => {
      this.#pending = {
        end,
        collector,
        unread: Buffer.alloc(0),
        finish: resolve,
      };
      const exports = exportSnippet(request.env);
      this.#stream.write(
        `${nonce} ${marker}\n${request.workdir}\n${exports ? `${exports}\n` : ""}${nonce}\n${request.command}\n${nonce}\n`,
      );
    });
    await killer.ended();
    if (killer.reason) return killedOutput(killer.reason, collector);
    const { output, truncated } = collector.result();
    return {
      output,
      // The shell ended during the action (the container stopped): its exit code stands for the command's.
      returncode: returncode ?? (await this.#shellExitCode()),
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
      const [first, ...uname] = this.#booted.subarray(0, newline).toString("utf8").split("\t");
      const ready = first === READY;
      if (ready && uname.length === 5 && uname.every(Boolean)) {
        const [system = "", node = "", release = "", version = "", machine = ""] = uname;
        this.platform = { system, node, release, version, machine };
      }
      for (const wake of this.#readyWaiters.splice(0)) wake(ready);
      if (!ready) this.close();
      return;
    }
    const pending = this.#pending;
    if (!pending) return;
    const data = pending.unread.length ? Buffer.concat([pending.unread, chunk]) : chunk;
    const at = data.indexOf(pending.end);
    if (at < 0) {
      // Hold back what could be the start of the end line.
      const keep = Math.min(data.length, pending.end.length - 1);
      pending.collector.push(data.subarray(0, data.length - keep));
      pending.unread = Buffer.from(data.subarray(data.length - keep));
      return;
    }
    pending.collector.push(data.subarray(0, at));
    const newline = data.indexOf(0x0a, at + pending.end.length);
    if (newline < 0) {
      pending.unread = Buffer.from(data.subarray(at));
      return;
    }
    this.#pending = undefined;
    pending.finish(Number(data.subarray(at + pending.end.length, newline).toString("latin1")));
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
