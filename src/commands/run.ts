import { join } from "node:path";
import pc from "picocolors";
import { loadConfig } from "../config/load.js";
import { consolePrinter } from "../console/printer.js";
import { ask, stdinIsTerminal } from "../console/prompt.js";
import { UserError } from "../errors.js";
import type { RunFacts } from "../facts/run-facts.js";
import { globalModelStats } from "../models/global-stats.js";
import { openEventLog } from "../run/event-log.js";
import { checkOutputPath } from "../run/output.js";
import { runTask } from "../run/run.js";
import { printRunEnd, readEndFacts, reportTarget, runError, stopRunSwarm } from "../run/run-end.js";
import type { RunResult } from "../run/run-options.js";
import { endWorkdir } from "../run/setup-dir.js";
import { endTiming } from "../run/timing.js";
import { asList } from "../util/as-list.js";
import { newRunId, timestampSlug } from "../util/ids.js";
import { configOverrides, type FlagsOf } from "./options.js";

/** `swerun run` flags (commands/options.ts). */
export type RunFlags = FlagsOf<"run">;

/** `swerun run`: one task, one agent, one trajectory. Returns the exit code. */
export async function runCommand(flags: RunFlags): Promise<number> {
  const specs = asList(flags.config);
  const config = loadConfig(specs, configOverrides("run", flags));
  const tty = stdinIsTerminal();
  let task = flags.task ?? config.run.task;
  if (!task && tty) task = await ask(pc.bold("What should the agent do? "));
  if (!task) throw new UserError("no task: give one with -t/--task (or set run.task in the config)");
  globalModelStats(); // a bad SWERUN_GLOBAL_* value is refused before anything is written
  const output = checkOutputPath(
    config.agent.output_path ?? join("runs", `run-${timestampSlug()}.traj.json`),
    flags.output ? "-o" : "agent.output_path",
  );
  const report = flags.report ? reportTarget(flags.report, flags.events) : undefined;
  const events = await openEventLog(flags.events, [config.model]);
  const runId = newRunId();
  const stream = events?.stream({ swarmId: "main", executionId: runId }, { swarmName: "swerun run" });
  stream?.start(task);
  const startedAt = Date.now();
  let result: RunResult;
  let facts: RunFacts | undefined;
  try {
    result = await runTask(task, {
      config,
      output,
      runId,
      interactive: tty,
      handleSignals: true,
      subscribers: [
        consolePrinter({ color: Boolean(process.stdout.isTTY) }),
        ...(stream ? [stream.listener] : []),
      ],
      onProgress: (line) => process.stderr.write(`${line}\n`),
      holdLastSave: true,
    });
    // One start, end and wall time for every output, also for a run that ended with an error.
    await endTiming(startedAt, result.trajectory ?? output, result.completeTrajectory);
    // What follows reads the trajectory's file; the run's messages need not stay in memory beside it.
    result = { ...result, messages: [] };
    facts = await readEndFacts(result);
    stopRunSwarm(stream, result, facts);
  } finally {
    stream?.stop({ success: false }); // a run that threw: the swarm still ends
    events?.close();
  }
  await printRunEnd(result, facts);
  printWorkdir(result, flags);
  if (report) {
    const { writeReportFile } = await import("../reports/write-report.js");
    await writeReportFile(report, result.trajectory ?? output, {
      task,
      model: config.model.model_name,
      error: result.error,
    });
    if (report !== "-") process.stderr.write(`report: ${report}\n`);
  }
  if (result.error !== undefined) throw runError(result.error);
  return 0;
}

/** The temporary copy of run.setup_dir the run worked in: removed unless --keep-workdir, said either way. */
function printWorkdir(result: RunResult, flags: RunFlags): void {
  if (!result.workdir) return;
  process.stdout.write(`${pc.bold("workdir:")} ${endWorkdir(result.workdir, Boolean(flags.keepWorkdir))}\n`);
}
