/**
 * A small long-lived process that starts swerun's local commands: a command costs a spawn from that small
 * process instead of a fork of the whole Node process, which on Linux copies swerun's page tables (libuv
 * clones without CLONE_VM) and costs about twice a spawn from a small process (bench/local.ts). Two
 * programs speak the same protocol: shell/command-spawner.py (python3 >= 3.8, tried first on Linux:
 * posix_spawn lends the command its memory until the exec, the cost of a spawn from Python itself) and
 * shell/command-spawner.pl (core Perl, elsewhere and where there is no such Python: a fork of ~5 MiB, about
 * 1.3x that). Each command gets a process
 * group of its own there; its output comes back through the spawner, tagged with the command's id. The same
 * process is the watchdog: when swerun dies, even by SIGKILL, its stdin closes and it kills what the
 * commands left. Without either, spawner.ts spawns commands itself and a shell watchdog watches
 * (shell/command-watchdog.sh). SWERUN_COMMAND_SPAWNER=python, perl or none picks one (or a path, the
 * python3 or perl to run it with).
 */
import { spawn } from "node:child_process";
import { basename, join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { packageRoot } from "../util/package-root.js";
import { randomId } from "../util/random-id.js";
import { PROCESS_TAG } from "./process-reaper.js";

/**
 * What every tag this process gives starts with, so the watchdog finds exactly this process's commands: its
 * pid (no other live process has it) and a random part (in case a pid namespace reuses it).
 */
export function newTagPrefix(): string {
  return `${process.pid.toString(36)}${randomId(8)}-`;
}

/** What the spawner tells about one command. */
export interface SpawnerEvents {
  /** It started (its program was exec'd) as `pid`, the leader of a process group of its own. */
  started(pid: number): void;
  /** It did not start (its cwd is missing, its program cannot be exec'd, the spawner is gone): nothing ran. */
  notRun(): void;
  output(chunk: Buffer): void;
  /** Every process holding its output has closed it. */
  outputEnd(): void;
  /** Its process ended with this wait status (exit code << 8, or the signal's number). */
  exited(status: number): void;
  /** The spawner died while the command ran (the command may still run: kill it). */
  lost(): void;
}

/** A handle that can be ref'd and unref'd (a socket of a child's stdio). */
type Handle = { ref?: () => void; unref?: () => void };

/** A program that runs a spawner: its kind, its file and its arguments before the prefix. */
interface SpawnerProgram {
  kind: "python" | "perl";
  file: string;
  args: string[];
}

/**
 * The programs tried, in order: on Linux, the system's python3 before the PATH's (whose `python3` may be a
 * version manager's shim, ~60 ms of bash before Python starts), then Perl. Elsewhere Perl only, unless asked
 * (macOS's /usr/bin/python3 may be a stub that offers to install developer tools); SWERUN_COMMAND_SPAWNER
 * keeps one kind.
 */
function spawnerPrograms(): SpawnerProgram[] {
  const shell = join(packageRoot(), "shell");
  const python = ["-I", "-S", join(shell, "command-spawner.py")];
  const programs: SpawnerProgram[] = [
    { kind: "python", file: "/usr/bin/python3", args: python },
    { kind: "python", file: "python3", args: python },
    { kind: "perl", file: "perl", args: [join(shell, "command-spawner.pl")] },
  ];
  const only = process.env.SWERUN_COMMAND_SPAWNER;
  if (!only) return process.platform === "linux" ? programs : programs.filter(({ kind }) => kind === "perl");
  // A path names the interpreter to run it with: Perl's spawner for a perl, Python's for anything else.
  if (only.includes("/")) {
    const kind = /^perl/.test(basename(only)) ? "perl" : "python";
    return [{ ...(programs.find((program) => program.kind === kind) as SpawnerProgram), file: only }];
  }
  return programs.filter((program) => program.kind === only);
}

/** A command's environment: every variable of `base` (but a name of `tag`'s), then `tag` (`NAME=value`). */
export interface CommandEnv {
  base: NodeJS.ProcessEnv;
  tag: string;
}

/** The encodings of frozen environments (which cannot change): a local environment's, made once per run. */
const encodings = new WeakMap<object, string | undefined>();

/**
 * An environment's variables as `NAME=value` fields, each ended by a NUL byte; undefined when a name is empty
 * or holds `=`, or a value holds a NUL byte (no exec can pass them).
 */
function encodedEnv(env: NodeJS.ProcessEnv): string | undefined {
  if (encodings.has(env)) return encodings.get(env);
  let text = "";
  let valid = true;
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || name === PROCESS_TAG) continue;
    if (name === "" || name.includes("=") || name.includes("\0") || value.includes("\0")) valid = false;
    text += `${name}=${value}\0`;
  }
  const encoded = valid ? text : undefined;
  if (Object.isFrozen(env)) encodings.set(env, encoded);
  return encoded;
}

/** Programs that ended by themselves before their first answer (too old a Python, a broken install). */
const failedPrograms = new Set<string>();

/** The global through which the bin hands a spawner it started early to the CLI's bundle. */
const EARLY = Symbol.for("swerun.commandSpawner");

export class CommandSpawner {
  /** Every tag of this swerun process's commands starts with it: the watchdog finds them by it. */
  readonly prefix: string;
  /** Which program it is. */
  readonly kind: SpawnerProgram["kind"];
  /** False once the spawner has ended: it runs no more commands. */
  alive = true;
  #closed = false;
  #answered = false;
  readonly #stdin: Writable;
  readonly #stdout: Readable & Handle;
  readonly #runs = new Map<number, SpawnerEvents & { pid?: number }>();
  #nextId = 0;
  #pending: Buffer = Buffer.alloc(0);

  /** Starts a spawner: the first program that starts (undefined when none does). */
  static start(prefix: string): CommandSpawner | undefined {
    for (const program of spawnerPrograms()) {
      if (failedPrograms.has(program.file)) continue;
      try {
        return new CommandSpawner(prefix, program);
      } catch {}
    }
    return undefined;
  }

  /** Starts one now and leaves it where `take` finds it: the bin's bundle and the CLI's are two. */
  static startEarly(): void {
    const spawner = CommandSpawner.start(newTagPrefix());
    if (spawner) (globalThis as Record<symbol, unknown>)[EARLY] = spawner;
  }

  /** The spawner the bin started, once (undefined when it started none). */
  static take(): CommandSpawner | undefined {
    const global = globalThis as Record<symbol, unknown>;
    const spawner = global[EARLY] as CommandSpawner | undefined;
    delete global[EARLY];
    return spawner?.alive ? spawner : undefined;
  }

  private constructor(prefix: string, program: SpawnerProgram) {
    this.prefix = prefix;
    this.kind = program.kind;
    // PYTHON*, PERL5LIB, PERL5OPT and the like from the user's environment must not reach it: its commands
    // get the environment of their request, not its own.
    const child = spawn(program.file, [...program.args, prefix], {
      stdio: ["pipe", "pipe", "ignore"],
      detached: true,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", LC_ALL: "C" },
    });
    if (!child.pid) {
      child.on("error", () => {});
      throw new Error(`${program.file} did not start`);
    }
    this.#stdin = child.stdin as Writable;
    this.#stdout = child.stdout as Readable & Handle;
    child.on("error", () => this.#gone());
    child.on("close", () => {
      // Ended by itself before it answered anything: this program cannot be a spawner here.
      if (!this.#closed && !this.#answered) failedPrograms.add(program.file);
      this.#gone();
    });
    for (const stream of [this.#stdin, this.#stdout]) {
      stream.on("error", () => {});
      (stream as Handle).unref?.();
    }
    this.#stdout.on("data", (chunk: Buffer) => this.#read(chunk));
    child.unref();
  }

  /** Ends the spawner: its stdin closes, it kills what its commands left running, and exits. */
  close(): void {
    this.#closed = true;
    this.#stdin.end();
    this.#gone();
  }

  /**
   * Asks the spawner to run `file` with `argv` (argv[0] first) in `cwd` with exactly `env.base` and the
   * `env.tag` entry (`NAME=value`, after the others); its id, or undefined when a value holds a NUL byte
   * (which no exec can pass: spawn it directly, which says so).
   */
  run(file: string, argv: string[], cwd: string, env: CommandEnv, events: SpawnerEvents) {
    if (!this.alive) return undefined;
    const fields = [cwd, file, String(argv.length), ...argv];
    const variables = encodedEnv(env.base);
    if (variables === undefined || fields.some((field) => field.includes("\0"))) return undefined;
    const payload = `${fields.join("\0")}\0${variables}${env.tag}\0`;
    this.#nextId += 1;
    const id = this.#nextId;
    this.#runs.set(id, events);
    this.#stdout.ref?.();
    this.#stdin.write(`r${id} ${Buffer.byteLength(payload)}\n${payload}`);
    return id;
  }

  /** Stops reading command `id`'s output (a killed command whose output some process still holds). */
  drop(id: number): void {
    this.#forget(id);
    if (this.alive) this.#stdin.write(`d${id}\n`);
  }

  /** Tells the watchdog of a command swerun spawned itself: "+<pid>" started, "-<pid>" ended. */
  watch(line: string): void {
    if (this.alive) this.#stdin.write(`${line}\n`);
  }

  #forget(id: number): void {
    this.#runs.delete(id);
    if (this.#runs.size === 0) this.#stdout.unref?.();
  }

  /** Parses the spawner's answers: a header line, and after an "o" line that many bytes of output. */
  #read(chunk: Buffer): void {
    this.#answered = true;
    let data = this.#pending.length > 0 ? Buffer.concat([this.#pending, chunk]) : chunk;
    for (;;) {
      const end = data.indexOf(10);
      if (end < 0) break;
      const line = data.toString("latin1", 0, end);
      const space = line.indexOf(" ");
      const id = Number(line.slice(1, space < 0 ? undefined : space));
      const value = space < 0 ? "" : line.slice(space + 1);
      let used = end + 1;
      if (line[0] === "o") {
        used += Number(value);
        if (data.length < used) break;
        this.#runs.get(id)?.output(data.subarray(end + 1, used));
      } else {
        this.#answer(line[0], id, value);
      }
      data = data.subarray(used);
    }
    this.#pending = Buffer.from(data);
  }

  #answer(kind: string | undefined, id: number, value: string): void {
    const run = this.#runs.get(id);
    if (!run) return;
    if (kind === "s") {
      run.pid = Number(value);
      run.started(run.pid);
    } else if (kind === "f") {
      this.#forget(id);
      run.notRun();
    } else if (kind === "e") {
      run.outputEnd();
    } else if (kind === "x") {
      run.exited(Number(value));
    }
  }

  /** The spawner ended: commands not yet started did not run; those running are lost. */
  #gone(): void {
    if (!this.alive) return;
    this.alive = false;
    const runs = [...this.#runs.values()];
    this.#runs.clear();
    for (const run of runs) {
      if (run.pid === undefined) run.notRun();
      else run.lost();
    }
  }

  /** Ends a run's bookkeeping once the command is done (its output ended and its process exited). */
  done(id: number): void {
    this.#forget(id);
  }
}
