import { resolve } from "node:path";
import pc from "picocolors";
import type { Agent } from "../agent/agent.js";
import type { EnvironmentConfig } from "../config/schema.js";
import { consolePrinter } from "../console/printer.js";
import { stdinIsTerminal } from "../console/prompt.js";
import { OutputPathError } from "../errors.js";
import { EventBus } from "../events.js";
import type { Model } from "../models/model.js";
import {
  compareStep,
  compareSubmissions,
  replayedObservations,
  type StepComparison,
} from "../replay/divergence.js";
import { REPLAY_STOPPED, type ReplayedStep, ReplayModel } from "../replay/replay-model.js";
import { type ReplayReport, ReplayTable, tally, writeReport } from "../replay/replay-report.js";
import { openEventLog } from "../run/event-log.js";
import { failedRun } from "../run/failed-run.js";
import { createRunModel, openRun } from "../run/run.js";
import { printRunEnd, readEndFacts, runError, stopRunSwarm } from "../run/run-end.js";
import type { RunOptions, RunResult } from "../run/run-options.js";
import type { RunSession } from "../run/run-session.js";
import { endWorkdir } from "../run/setup-dir.js";
import { AGENT_NAME, type SwarmEventStream } from "../run/swarm-events.js";
import type { LoadedTrajectory } from "../trajectory/reader.js";
import { newRunId } from "../util/ids.js";
import { redact } from "../util/secrets.js";
import {
  type ReplayFlags,
  type ReplaySetup,
  recordedModelConfig,
  recordedObservationTemplate,
  replaySetup,
} from "./replay-setup.js";

/** Runs the agent from its restored messages to its end; what happened is the result (errors included). */
async function continueAgent(session: RunSession, agent: Agent): Promise<RunResult> {
  try {
    await agent.runLoop();
    return await session.finish(agent);
  } catch (error) {
    return session.finish(agent, error);
  }
}

/**
 * `swerun replay`: runs the commands of a recorded trajectory again, compares every step's exit code and
 * output and the final submission with the recorded ones, and optionally lets a model carry on.
 * Returns 0 when the submission matches, 1 when it differs (or, when it is not compared, when a step diverged).
 */
export async function runReplay(path: string, flags: ReplayFlags): Promise<number> {
  const s = replaySetup(path, flags);
  const events = await openEventLog(flags.events, flags.continue ? [s.config.model] : []);
  const runId = newRunId();
  // The replayed steps are the agent "replay"; a model that carries on is swerun's agent.
  const stream = events?.stream({ swarmId: "main", executionId: runId }, { agents: ["replay", AGENT_NAME] });
  try {
    return await replay(flags, s, runId, stream);
  } finally {
    events?.close();
  }
}

/** The replay's record in its trajectory's `info.replay`, kept up to date as steps are compared. */
interface ReplayInfo {
  trajectory: string;
  trajectory_format: LoadedTrajectory["kind"];
  until: number | null;
  continue: boolean;
  recorded_steps: number;
  replayed_steps: number;
  divergent_steps: number[];
}

/** What a replay collects as it runs: its info, the step comparisons, its model and its session. */
interface Progress {
  info: ReplayInfo;
  comparisons: StepComparison[];
  model?: ReplayModel;
  session?: RunSession;
}

/** Where the commands run again: Docker or local, and the working directory. */
interface Place {
  docker: boolean;
  cwd: string;
  where: string;
}

function placeOf(environment: EnvironmentConfig): Place {
  const docker = environment.environment_class === "docker";
  const cwd = environment.cwd || (docker ? "/" : "");
  const where = docker ? `docker (${environment.image}, cwd ${cwd})` : `local (cwd ${cwd})`;
  return { docker, cwd, where };
}

const print = (line: string) => process.stdout.write(`${redact(line)}\n`);

async function replay(
  flags: ReplayFlags,
  s: ReplaySetup,
  runId: string,
  stream: SwarmEventStream | undefined,
): Promise<number> {
  stream?.start();
  const bus = new EventBus();
  // The model that carries on is built before anything runs, so a bad model fails fast.
  const nextModel = flags.continue ? await createRunModel(s.config, bus) : undefined;
  const place = placeOf(s.environment);
  const table = new ReplayTable(Boolean(process.stdout.isTTY));
  const progress: Progress = { info: replayInfo(flags, s), comparisons: [] };
  const options = replayRunOptions(s, { runId, bus, stream, place, table, progress, flags });
  progress.session = await openReplay(options, stream);
  const steps = s.recorded.steps.length;
  print(
    `Replaying ${s.until} of ${steps} steps of ${s.trajectory.path} (${s.trajectory.kind}, ${s.recorded.style} actions) in ${place.where}`,
  );
  const { result, continued } = await replaySteps(s, progress, table, nextModel);
  const facts = await readEndFacts(result);
  stopRunSwarm(stream, result, facts, result.error === undefined);
  if (result.error !== undefined) {
    await printRunEnd(result, facts);
    if (s.madeCwd) print(`${pc.bold("workdir:")} ${endWorkdir(place.cwd, Boolean(flags.keepWorkdir))}`);
    throw runError(result.error);
  }
  const early = stoppedEarly(s, progress, result);
  const report = replayReport(s, progress, { result, continued, stoppedEarly: early });
  printReplayEnd(report, s, { place, table, stoppedEarly: early, keep: Boolean(flags.keepWorkdir) });
  const compared = report.submission.status === "same" || report.submission.status === "different";
  if (!compared) return report.divergent_steps.length > 0 ? 1 : 0;
  return report.submission.status === "same" ? 0 : 1;
}

function replayInfo(flags: ReplayFlags, s: ReplaySetup): ReplayInfo {
  return {
    trajectory: resolve(s.trajectory.path),
    trajectory_format: s.trajectory.kind,
    until: flags.until === undefined ? null : s.until,
    continue: Boolean(flags.continue),
    recorded_steps: s.recorded.steps.length,
    replayed_steps: 0,
    divergent_steps: [],
  };
}

/** The run of the replay: the replay's environment, a model that plays the recorded steps and compares each. */
function replayRunOptions(
  s: ReplaySetup,
  run: {
    runId: string;
    bus: EventBus;
    stream: SwarmEventStream | undefined;
    place: Place;
    table: ReplayTable;
    progress: Progress;
    flags: ReplayFlags;
  },
): RunOptions {
  const { trajectory, config, environment } = s;
  const { progress, place } = run;
  const instanceId =
    typeof trajectory.extras.instance_id === "string" ? trajectory.extras.instance_id : undefined;
  const onStep = ({ step, outputs, messages }: ReplayedStep) => {
    const cwds = { recorded: s.recordedCwd, replayed: place.cwd };
    const comparison = compareStep(step, replayedObservations(outputs, messages), cwds);
    progress.comparisons.push(comparison);
    progress.info.replayed_steps = comparison.step;
    if (comparison.status === "DIFFERENT") progress.info.divergent_steps.push(comparison.step);
    for (const row of run.table.rows(comparison)) print(row);
  };
  return {
    // The environment is the replay's own; model and agent are the continuing model's.
    // run.setup_dir is copied by the replay itself (prepareLocalCwd), with --cwd and the recorded cwd.
    config: { ...config, environment, run: { ...config.run, setup_dir: undefined } },
    output: s.output,
    ...(instanceId ? { instanceId } : {}),
    runId: run.runId,
    info: { replay: progress.info },
    extras: trajectory.extras,
    bus: run.bus,
    ...(run.stream ? { subscribers: [run.stream.listener] } : {}),
    interactive: stdinIsTerminal(),
    handleSignals: true,
    onProgress: (line) => process.stderr.write(`${line}\n`),
    model: (env) => {
      progress.model = new ReplayModel({
        run: s.recorded,
        until: s.until,
        handover: Boolean(run.flags.continue),
        observationTemplate: recordedObservationTemplate(trajectory) ?? config.model.observation_template,
        recordedModel: recordedModelConfig(trajectory),
        templateVars: env.templateVars(),
        addMessages: (messages) => progress.session?.agent?.addMessages(...messages),
        onStep,
      });
      return progress.model;
    },
  };
}

/** Opens the replay's run; a run that cannot start is recorded (as `swerun run` records it) and thrown. */
async function openReplay(options: RunOptions, stream: SwarmEventStream | undefined): Promise<RunSession> {
  try {
    return await openRun(options);
  } catch (error) {
    stream?.stop({ success: false, error });
    if (error instanceof OutputPathError) throw error;
    const failed = await failedRun(options, error);
    await printRunEnd(failed, await readEndFacts(failed));
    throw runError(error);
  }
}

/**
 * Replays the recorded steps with every limit off; then, with `--continue`, the next model carries on from the
 * replayed messages (without the replay's stop message) and the usage so far, so step and cost limits count
 * from the recorded run's.
 */
async function replaySteps(
  s: ReplaySetup,
  progress: Progress,
  table: ReplayTable,
  nextModel: Model | undefined,
): Promise<{ result: RunResult; continued: boolean }> {
  const session = progress.session as RunSession;
  const model = progress.model as ReplayModel;
  try {
    const limitsOff = {
      step_limit: 0,
      cost_limit: 0,
      wall_time_limit_seconds: 0,
      max_consecutive_format_errors: 0,
      mode: "yolo" as const,
    };
    const replayed = session.createAgent({ agent: limitsOff, interactive: false });
    replayed.restore(structuredClone(s.recorded.prefix), { nCalls: 0, cost: 0 });
    print(table.header());
    const result = await continueAgent(session, replayed);
    if (!nextModel || result.error !== undefined) return { result, continued: false };
    if (result.exit_status !== REPLAY_STOPPED) {
      print(`nothing to continue: the replay ended with ${result.exit_status}`);
      return { result, continued: false };
    }
    print(pc.bold(`\n${nextModel.name} takes over after step ${model.replayedSteps}`));
    const color = Boolean(process.stdout.isTTY);
    const agent = session.createAgent({
      model: nextModel,
      subscribers: [consolePrinter({ color, firstStep: replayed.nCalls + 1 })],
    });
    agent.restore(replayed.messages.slice(0, -1), { nCalls: replayed.nCalls, cost: replayed.cost });
    return { result: await continueAgent(session, agent), continued: true };
  } finally {
    await session.close();
  }
}

/** Whether the replay stopped before the last recorded step (`--until`), so the submission is not compared. */
function stoppedEarly(s: ReplaySetup, progress: Progress, result: RunResult): boolean {
  const model = progress.model as ReplayModel;
  return result.exit_status === REPLAY_STOPPED && model.replayedSteps < s.recorded.steps.length;
}

function replayReport(
  s: ReplaySetup,
  progress: Progress,
  end: { result: RunResult; continued: boolean; stoppedEarly: boolean },
): ReplayReport {
  const { result, continued } = end;
  const replayedSteps = (progress.model as ReplayModel).replayedSteps;
  return {
    trajectory: progress.info.trajectory,
    trajectory_format: s.trajectory.kind,
    output: s.output,
    recorded_steps: s.recorded.steps.length,
    replayed_steps: replayedSteps,
    until: progress.info.until,
    continued,
    ...tally(progress.comparisons),
    steps: progress.comparisons,
    exit_status: { recorded: s.recorded.exitStatus, replayed: result.exit_status },
    submission: end.stoppedEarly
      ? { status: "not_compared", reason: `the replay stopped after step ${replayedSteps}` }
      : compareSubmissions(s.recorded.submission, result.submission),
  };
}

/** The summary, the trajectory and report written, and the local working directory to look into. */
function printReplayEnd(
  report: ReplayReport,
  s: ReplaySetup,
  end: { place: Place; table: ReplayTable; stoppedEarly: boolean; keep: boolean },
): void {
  const { place } = end;
  for (const line of end.table.summary(report)) print(line);
  print(`${pc.bold("trajectory:")} ${s.output}`);
  if (s.report) {
    writeReport(s.report, report);
    if (s.report !== "-") print(`${pc.bold("report:")} ${s.report}`);
  }
  if (place.docker) return;
  // A copy the replay made is removed at the end, unless kept: to inspect where it stopped, or on request.
  const where = end.stoppedEarly
    ? `${place.cwd} (stopped after step ${report.replayed_steps}; inspect it with: cd ${place.cwd})`
    : s.madeCwd
      ? endWorkdir(place.cwd, end.keep)
      : place.cwd;
  print(`${pc.bold("workdir:")} ${where}`);
}
