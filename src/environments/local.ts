import { type Stats, statSync } from "node:fs";
import type { LocalEnvironmentConfig } from "../config/schema.js";
import { UserError } from "../errors.js";
import type { Action, ExecOutput } from "../messages.js";
import { randomId } from "../util/random-id.js";
import type { Environment, ExecuteOptions } from "./environment.js";
import { ENVIRONMENT_TYPES } from "./environment-types.js";
import { platformVars } from "./platform.js";
import { runCommand } from "./run-command.js";
import { reapProcesses } from "./spawner.js";

/** What runs a command when `local_interpreter` is unset: mini-swe-agent's `shell=True`. */
export const DEFAULT_LOCAL_INTERPRETER = ["/bin/sh", "-c"];

const POSIX_SHELLS = new Set(["bash", "sh", "dash", "zsh", "ksh"]);

/**
 * The argv that runs `command` with stderr pointed at stdout, so both arrive merged in write order.
 * A POSIX shell gets `exec 2>&1; ` in front of the command, on its first line, so the shell's line numbers
 * in messages stay the same and no extra process starts; any other interpreter runs under a small `sh`
 * that redirects first (about 1 ms more per command).
 */
export function mergedOutputCommand(interpreter: string[], command: string): string[] {
  const program = interpreter[0]?.split("/").at(-1) ?? "";
  if (POSIX_SHELLS.has(program) && interpreter.at(-1)?.match(/^-\w*c$/))
    return [...interpreter, `exec 2>&1; ${command}`];
  return ["/bin/sh", "-c", 'exec "$0" "$@" 2>&1', ...interpreter, command];
}

/**
 * Refuses a `cwd` that is not a folder before the first command (and the first model call): every command
 * would fail with `spawn /bin/sh ENOENT` until a limit ends the run.
 */
export function checkLocalCwd(cwd: string): void {
  if (!cwd) return;
  let stats: Stats | undefined;
  try {
    stats = statSync(cwd);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such folder" : code === "EACCES" ? "permission denied" : String(code);
    throw new UserError(`environment.cwd ${cwd}: ${why}; the local environment runs its commands there`);
  }
  if (!stats.isDirectory())
    throw new UserError(
      `environment.cwd ${cwd}: not a folder; the local environment runs its commands there`,
    );
}

/**
 * Runs each action as a fresh process group on this machine, stdout and stderr merged in order. A timeout
 * or interrupt kills everything the action started; `close` kills everything the environment's actions
 * started that still runs (see spawner.ts for how they are found, and what cannot be).
 */
export class LocalEnvironment implements Environment {
  readonly config: LocalEnvironmentConfig;
  /** Marks the processes of this environment's commands (SWERUN_PROCESS_TAG). */
  readonly #tag = randomId(12);
  /**
   * The commands' environment: swerun's own (which it never changes) as it was at the first command, with
   * `config.env` over it. Made once and frozen: copying `process.env` costs ~30-70 us a command, and the
   * spawner keeps the encoding of a frozen one (command-spawner.ts).
   */
  #env: NodeJS.ProcessEnv | undefined;

  constructor(config: LocalEnvironmentConfig) {
    this.config = config;
  }

  execute(action: Action, options: ExecuteOptions = {}): Promise<ExecOutput> {
    const interpreter = this.config.local_interpreter ?? DEFAULT_LOCAL_INTERPRETER;
    const [file = "/bin/sh", ...args] = mergedOutputCommand(interpreter, action.command);
    this.#env ??= Object.freeze({ ...process.env, ...this.config.env });
    return runCommand({
      file,
      args,
      cwd: options.cwd || this.config.cwd || process.cwd(),
      env: this.#env,
      tag: this.#tag,
      command: action.command,
      timeout: options.timeout ?? this.config.timeout,
      maxOutputBytes: this.config.max_output_bytes,
      signal: options.signal,
    });
  }

  templateVars(): Record<string, unknown> {
    return { ...this.config, ...platformVars(), ...process.env };
  }

  serialize() {
    return {
      environment: { ...this.config },
      environment_type: ENVIRONMENT_TYPES.local,
    };
  }

  /** Kills what the environment's commands left running (background jobs, daemons). */
  async close(): Promise<void> {
    await reapProcesses(this.#tag);
  }
}
