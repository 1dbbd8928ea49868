import pc from "picocolors";
import { UserError } from "../errors.js";
import { TemplateError } from "../templates/render.js";
import { FileWriteError, ioReason } from "../util/file-error.js";
import { redact } from "../util/secrets.js";
import { consoleToStderr } from "./event-log.js";
import { checkOutputFile } from "./output.js";
import type { RunResult } from "./run.js";

/**
 * What the commands that run one task (`run`, `replay`, `swebench-single`) share around it: the end of a
 * run printed, a run's error as the CLI reports it, and `--report PATH` checked up front.
 */

/** The lines every command prints at the end of a run: exit status, trajectory, and where it really went. */
export function printRunEnd(result: RunResult): void {
  process.stdout.write(`${pc.bold("exit status:")} ${result.exit_status}\n`);
  if (result.trajectoryFailure) {
    const { path, error } = result.trajectoryFailure;
    const why =
      error instanceof FileWriteError ? error.message : `could not write ${path}: ${ioReason(error)}`;
    const where = result.trajectory
      ? `the trajectory was saved to ${result.trajectory} instead`
      : "the trajectory could not be saved anywhere";
    process.stderr.write(redact(`swerun: ${why}; ${where}\n`));
  }
  if (result.trajectory) process.stdout.write(`${pc.bold("trajectory:")} ${result.trajectory}\n`);
}

/** A run that ended with an error: a template error is bad input (exit 2, one line naming the template). */
export function runError(error: unknown): unknown {
  return error instanceof TemplateError ? new UserError(error.message) : error;
}

/**
 * `--report PATH` checked before anything runs (`-`: standard output, and what the command prints there goes
 * to standard error; only one output can have standard output).
 */
export function reportTarget(path: string, events: string | undefined): string {
  const target = checkOutputFile(String(path), "--report");
  if (target === "-" && events === "-")
    throw new UserError("--report - and --events -: only one of them can go to standard output");
  if (target === "-") consoleToStderr();
  return target;
}
