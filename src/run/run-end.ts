import pc from "picocolors";
import { UserError } from "../errors.js";
import type { RunFacts } from "../facts/run-facts.js";
import { TemplateError } from "../templates/render.js";
import { largeFile } from "../trajectory/reader.js";
import { collectGarbage } from "../util/collect-garbage.js";
import { FileWriteError, ioReason } from "../util/file-error.js";
import { redact } from "../util/secrets.js";
import { consoleToStderr } from "./event-log.js";
import { checkOutputFile } from "./output.js";
import type { RunResult } from "./run-options.js";
import { type SwarmEventStream, type SwarmStop, stopFigures } from "./swarm-events.js";

/**
 * What the commands that run one task (`run`, `replay`, `swebench-single`) share around it: the end of a
 * run printed, a run's error as the CLI reports it, and `--report PATH` checked up front.
 */

/**
 * The run's facts, read back from its trajectory once for every output at its end (the totals line, the
 * `--events` swarm's figures); undefined without a trajectory or when it cannot be read back.
 */
export async function readEndFacts(result: RunResult): Promise<RunFacts | undefined> {
  if (!result.trajectory) return undefined;
  const { readRunFacts } = await import("../facts/read-run.js");
  // A long run's messages are dead by now (the caller let go of them) but not yet collected: collected
  // first, reading its file back takes their room (a 250-step run's tree peaks ~4 MiB lower, bench/lean.ts).
  if (largeFile(result.trajectory)) collectGarbage();
  try {
    return readRunFacts(result.trajectory);
  } catch {
    return undefined; // a trajectory that cannot be read back has no figures to show
  }
}

/**
 * The lines every command prints at the end of a run: exit status, the run's figures (its trajectory's
 * facts, from `readEndFacts`, as every other output reads them), the submitted patch, the trajectory, and
 * where it really went.
 */
export async function printRunEnd(result: RunResult, facts: RunFacts | undefined): Promise<void> {
  process.stdout.write(`${pc.bold("exit status:")} ${result.exit_status}\n`);
  if (facts) {
    const { figuresLine } = await import("../facts/figures.js");
    process.stdout.write(`${pc.bold("totals:")} ${figuresLine(facts)}\n`);
  }
  if (result.exit_status === "Submitted" && result.submission.trim()) {
    const patch = result.submission.endsWith("\n") ? result.submission : `${result.submission}\n`;
    process.stdout.write(`${pc.bold("submission:")}\n${redact(patch)}`);
  }
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

/**
 * Ends a run's swarm (`--events`) once its trajectory is complete, with the figures of the trajectory's facts
 * (its cost, total tokens and wall time: those every other output shows; from `readEndFacts`).
 */
export function stopRunSwarm(
  stream: SwarmEventStream | undefined,
  result: RunResult,
  facts: RunFacts | undefined,
  success = result.exit_status === "Submitted",
): void {
  if (!stream) return;
  // Without facts (no trajectory, or one that cannot be read back): the stream's own figures.
  const figures: Partial<SwarmStop> = facts ? stopFigures(facts) : { totalCost: result.cost };
  stream.stop({ success, error: result.error, ...figures });
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
