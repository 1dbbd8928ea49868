import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import type { BubblewrapEnvironmentConfig } from "../config/schema.js";
import { UserError } from "../errors.js";
import type { Action, ExecOutput } from "../messages.js";
import { randomId } from "../util/random-id.js";
import { registerSecret } from "../util/secrets.js";
import type { Environment, ExecuteOptions } from "./environment.js";
import { ENVIRONMENT_TYPES } from "./environment-types.js";
import { platformVars } from "./platform.js";
import { runCommand } from "./run-command.js";
import { PROCESS_TAG, reapProcesses } from "./spawner.js";

/** Seconds the start-up check may take (bwrap starts a sandbox in milliseconds). */
const CHECK_TIMEOUT_SECONDS = 30;

/**
 * The bwrap argv after the program: the config's `wrapper_args`, then swerun's `--die-with-parent` (a
 * SIGKILLed swerun takes its sandboxed commands with it) and its process tag (found again even under
 * `--clearenv`), the working directory bound read-write at its own path, the variables, and the command.
 */
export function sandboxArgs(
  config: BubblewrapEnvironmentConfig,
  cwd: string,
  tag: string,
  command: string[],
): string[] {
  const variables: string[] = [];
  for (const name of config.forward_env) {
    const value = process.env[name];
    if (value !== undefined) variables.push("--setenv", name, value);
  }
  for (const [name, value] of Object.entries(config.env)) variables.push("--setenv", name, value);
  return [
    ...config.wrapper_args,
    "--die-with-parent",
    ...["--setenv", PROCESS_TAG, tag],
    ...["--bind", cwd, cwd],
    ...["--chdir", cwd],
    ...variables,
    ...command,
  ];
}

/** The last line bwrap wrote about why it could not start, or the error's own message. */
function reason(error: { stderr?: unknown; message: string }): string {
  const lines = String(error.stderr ?? "")
    .trim()
    .split("\n");
  return lines.at(-1)?.trim() || error.message;
}

/**
 * Starts one sandbox as the commands will be started, so that a missing bwrap or options it refuses (or a
 * kernel without the namespaces they ask for) are one line before the first model call, not a failure in
 * every observation.
 */
function checkSandbox(config: BubblewrapEnvironmentConfig): Promise<void> {
  const args = [...config.wrapper_args, "--die-with-parent", "bash", "-c", ":"];
  const options = { cwd: "/", timeout: CHECK_TIMEOUT_SECONDS * 1000, killSignal: "SIGKILL" as const };
  return new Promise((done, fail) => {
    execFile(config.executable, args, options, (error, _stdout, stderr) => {
      if (!error) return done();
      if ((error as NodeJS.ErrnoException).code === "ENOENT") {
        return fail(
          new UserError(
            `environment.executable: "${config.executable}" not found: install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap) or set environment.executable to its path`,
          ),
        );
      }
      fail(
        new UserError(
          `environment.wrapper_args: bwrap cannot start a sandbox: ${reason({ ...error, stderr })}`,
        ),
      );
    });
  });
}

/**
 * Runs each action as `bash -c` in a bubblewrap sandbox of its own, as mini-swe-agent's bubblewrap
 * environment does: what `wrapper_args` binds (by default the host's system directories, read-only), a
 * fresh /tmp, and the working directory read-write. Output, timeouts and interrupts as in the local
 * environment: the sandbox's processes are killed with the command (spawner.ts), and `close` kills what
 * the commands left running and removes the working directory it made.
 */
export class BubblewrapEnvironment implements Environment {
  readonly config: BubblewrapEnvironmentConfig;
  /** Marks the processes of this environment's commands (SWERUN_PROCESS_TAG). */
  readonly #tag = randomId(12);
  /** The working directory made for this environment when `cwd` is unset; removed by `close`. */
  #workdir: string | undefined;

  constructor(config: BubblewrapEnvironmentConfig) {
    this.config = config;
  }

  /** The environment, once a sandbox has started with its config (UserError when none can). */
  static async create(config: BubblewrapEnvironmentConfig): Promise<BubblewrapEnvironment> {
    // Forwarded host values are secrets: whatever a command prints of them is redacted from what swerun writes.
    for (const name of config.forward_env) registerSecret(process.env[name]);
    await checkSandbox(config);
    return new BubblewrapEnvironment(config);
  }

  execute(action: Action, options: ExecuteOptions = {}): Promise<ExecOutput> {
    const given = options.cwd || this.config.cwd;
    this.#workdir ??= given ? undefined : mkdtempSync(join(os.tmpdir(), "swerun-bwrap-"));
    const cwd = resolve(given || (this.#workdir as string));
    // stderr joins stdout inside the sandbox, so both arrive in the order written (as mini's one pipe).
    const command = ["bash", "-c", `exec 2>&1; ${action.command}`];
    return runCommand({
      file: this.config.executable,
      args: (tag) => sandboxArgs(this.config, cwd, tag, command),
      cwd: "/",
      env: process.env,
      tag: this.#tag,
      command: action.command,
      timeout: options.timeout ?? this.config.timeout,
      maxOutputBytes: this.config.max_output_bytes,
      signal: options.signal,
    });
  }

  /** The config and the platform fields, as mini-swe-agent's (the process environment is not among them). */
  templateVars(): Record<string, unknown> {
    return { ...this.config, ...platformVars() };
  }

  /** The config; forward_env holds names only, so no host value is ever recorded. */
  serialize() {
    return {
      environment: { ...this.config },
      environment_type: ENVIRONMENT_TYPES.bubblewrap,
    };
  }

  /** Kills what the environment's commands left running, then removes the working directory it made. */
  async close(): Promise<void> {
    await reapProcesses(this.#tag);
    if (this.#workdir) rmSync(this.#workdir, { recursive: true, force: true });
    this.#workdir = undefined;
  }
}
