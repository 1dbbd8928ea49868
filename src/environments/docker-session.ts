import { randomBytes } from "node:crypto";
import type { Duplex } from "node:stream";
import type Docker from "dockerode";
import type { ExecOutput } from "../messages.js";
import { ACTION_MARKER, ActionKiller, demultiplex, INTERRUPTED, killedOutput } from "./docker-exec.js";
import { OutputCollector } from "./output.js";

/** The first line of the session's output: this, then the container's uname -s -n -r -v -m, tab-separated. */
const READY = "swerun-session ready";

/**
 * The shell session's loop, sent as the first line of its stdin (so `ps` in the container shows a short
 * command line). A request is a line "nonce marker", the cwd, then the command's lines and a line holding
 * only the nonce; all read with shell builtins (no process per request). The interpreter runs with the
 * command in a new session, stdin from /dev/null, stderr merged into stdout and the action's marker in its
 * environment; the output goes through `cat`, which ends when every process holding it has closed it, as a
 * `docker exec` stream does. Then the loop prints "\n<nonce> <exit code>\n". The nonce is never in the
 * command's environment, so no output can fake the end of an action.
 */
const LOOP = [
  "command -v cat >/dev/null 2>&1 || exit 3; exec 3>&1; s=; command -v setsid >/dev/null 2>&1 && s=setsid;",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell syntax
  "l=$(printf '\\nx'); l=${l%x};",
  `printf '${READY}\\t%s\\t%s\\t%s\\t%s\\t%s\\n' "$(uname -s)" "$(uname -n)" "$(uname -r)" "$(uname -v)" "$(uname -m)";`,
  "while IFS=' ' read -r n m && IFS= read -r d && IFS= read -r c; do",
  `while IFS= read -r x && [ "$x" != "$n" ]; do c="$c$l$x"; done;`,
  `r=$( { { ( cd "$d" && ${ACTION_MARKER}=$m exec $s "$@" "$c" ) </dev/null 2>&1 3>&- 4>&-; echo $? >&4; } | cat >&3 4>&-; } 4>&1 );`,
  `printf '\\n%s %s\\n' "$n" "\${r:-255}"; done`,
].join(" ");

/** What one action asks of the session. */
export interface SessionRequest {
  command: string;
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
 * One long-lived shell in the container, started by a single exec, that runs every action of the
 * environment: a step costs a write and a read on an open connection instead of an exec's round trips
 * through the daemon and the runtime (about 60 ms on the development machine; a session step is a few ms).
 * Timeouts and interrupts kill the action's processes as `runExec` does. If a command kills the session's
 * shell, its action ends with what it printed and the shell's exit code, and `alive` turns false.
 */
export class DockerSession {
  readonly #container: Docker.Container;
  readonly #exec: Docker.Exec;
  readonly #stream: Duplex;
  readonly #ended: Promise<void>;
  /** The container's uname fields, named as Python's `platform.uname()` names them; empty without uname. */
  platform: Record<string, string> = {};
  #alive = true;
  #booting = true;
  #readyWaiters: Array<(ready: boolean) => void> = [];
  #booted = Buffer.alloc(0);
  #pending: Pending | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  private constructor(container: Docker.Container, exec: Docker.Exec, stream: Duplex) {
    this.#container = container;
    this.#exec = exec;
    this.#stream = stream;
    this.#ended = demultiplex(stream, (chunk, fromStderr) => {
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
   * Starts the session's shell with the environment's variables and interpreter (e.g. bash -lc). Resolves
   * once it answers; rejects when it cannot start (no /bin/sh, the daemon refuses) or does not answer in
   * `timeoutMs`, so the caller can fall back to one exec per action. Daemon errors keep their status code.
   */
  static async start(
    container: Docker.Container,
    options: { env: string[]; interpreter: string[]; timeoutMs?: number },
  ): Promise<DockerSession> {
    const exec = await container.exec({
      Cmd: ["/bin/sh", "-c", 'IFS= read -r l && eval "$l"', "swerun-session", ...options.interpreter],
      Env: options.env,
      WorkingDir: "/",
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
    const stream = (await exec.start({ hijack: true, stdin: true })) as Duplex;
    const session = new DockerSession(container, exec, stream);
    stream.write(`${LOOP}\n`);
    const ready = await Promise.race([
      session.#readyPromise(),
      new Promise<false>((resolve) => setTimeout(() => resolve(false), options.timeoutMs ?? 10_000).unref()),
    ]);
    if (!ready) {
      session.close();
      throw new Error("the container's /bin/sh did not start swerun's shell session");
    }
    return session;
  }

  #readyPromise(): Promise<boolean> {
    return new Promise((resolve) => this.#readyWaiters.push(resolve));
  }

  /** False once the shell has exited or the connection closed; a new session is needed then. */
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
    if (!this.#alive) throw new Error("swerun's shell session in the container has ended");
    const nonce = randomBytes(16).toString("hex");
    const marker = randomBytes(8).toString("hex");
    const killer = new ActionKiller(this.#container, marker, request, () => this.close());
    const returncode = await new Promise<number | undefined>((resolve) => {
      this.#pending = {
        end: Buffer.from(`\n${nonce} `),
        collector,
        unread: Buffer.alloc(0),
        finish: resolve,
      };
      this.#stream.write(`${nonce} ${marker}\n${request.workdir}\n${request.command}\n${nonce}\n`);
    });
    await killer.ended();
    if (killer.reason) return killedOutput(killer.reason, collector);
    const { output, truncated } = collector.result();
    return {
      output,
      // The shell itself was killed by the command: its own exit code stands for the command's.
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
      const info = await this.#exec.inspect().catch(() => undefined);
      if (!info) return -1;
      if (!info.Running && typeof info.ExitCode === "number") return info.ExitCode;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return -1;
  }

  /** Ends the shell (its stdin closes) and the connection. Safe to call twice. */
  close(): void {
    this.#alive = false;
    this.#stream.destroy();
  }
}
