import { existsSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import fse from "fs-extra";
import pc from "picocolors";
import type { Agent } from "../agent/agent.js";
import { type ConfigOverride, loadConfig } from "../config/load.js";
import { isPlainObject } from "../config/merge.js";
import { type EnvironmentConfig, modelSchema, type SwerunConfig } from "../config/schema.js";
import { consolePrinter } from "../console/printer.js";
import { OutputPathError, UserError } from "../errors.js";
import { EventBus } from "../events.js";
import { isEnvironmentSpec, replayEnvironment } from "../replay/config.js";
import {
  compareStep,
  compareSubmissions,
  replayedObservations,
  type StepComparison,
} from "../replay/divergence.js";
import { type LoadedTrajectory, loadTrajectory } from "../replay/load.js";
import { type RecordedRun, recordedRun } from "../replay/recorded.js";
import { REPLAY_STOPPED, ReplayModel } from "../replay/replay-model.js";
import { type ReplayReport, ReplayTable, tally, writeReport } from "../replay/report.js";
import { openEventLog } from "../run/event-log.js";
import { checkOutputPath } from "../run/output.js";
import {
  createRunModel,
  failedRun,
  openRun,
  type RunOptions,
  type RunResult,
  type RunSession,
} from "../run/run.js";
import { printRunEnd, reportTarget, runError } from "../run/run-end.js";
import { AGENT_NAME, type SwarmEventStream } from "../run/swarm-events.js";
import { asList } from "../util/as-list.js";
import { newRunId, timestampSlug } from "../util/ids.js";
import { redact } from "../util/secrets.js";
import { runOverrides } from "./run.js";

/** `swerun replay` flags, as cac hands them over. */
export interface ReplayFlags {
  /** Config files, built-in names or key=value (repeatable): environment keys over the recorded ones; model and agent for --continue. */
  config?: string | string[];
  model?: string;
  modelClass?: string;
  environmentClass?: string;
  /** Working directory of the replay (a local checkout, or a path in the container). */
  cwd?: string;
  image?: string;
  output?: string;
  /** Where the divergence report is written as JSON. */
  report?: string;
  /** Stop after this step. */
  until?: number | string;
  /** After the replayed steps, the model from -m/-c carries on. */
  continue?: boolean;
  costLimit?: number;
  yolo?: boolean;
  exitImmediately?: boolean;
  /** `--events PATH`: SwarmSDK-shaped JSON lines (`-`: standard output). */
  events?: string;
}

const DEFAULT_ACTION_REGEX = modelSchema.shape.action_regex.parse(undefined);

function parseUntil(value: number | string | undefined, steps: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > steps) {
    throw new UserError(
      `--until ${String(value)}: expected a step number from 0 to ${steps} (the trajectory has ${steps} steps)`,
    );
  }
  return n;
}

/** The template that rendered the recorded observations (mini-swe-agent 1.x kept it in the agent section). */
function recordedObservationTemplate(trajectory: LoadedTrajectory): string | undefined {
  const config = isPlainObject(trajectory.info.config) ? trajectory.info.config : {};
  const model = isPlainObject(config.model) ? config.model : {};
  const agent = isPlainObject(config.agent) ? config.agent : {};
  const candidates = [
    model.observation_template,
    model.action_observation_template,
    agent.action_observation_template,
  ];
  return candidates.find((value): value is string => typeof value === "string");
}

function recordedModelConfig(trajectory: LoadedTrajectory): Record<string, unknown> {
  const config = isPlainObject(trajectory.info.config) ? trajectory.info.config : {};
  return isPlainObject(config.model) ? config.model : {};
}

/** The local checkout: --cwd, else a fresh copy of run.setup_dir, else the recorded cwd if it still exists. */
function prepareLocalCwd(
  environment: EnvironmentConfig,
  config: SwerunConfig,
  flags: ReplayFlags,
  recordedCwd: string,
): void {
  if (flags.cwd) environment.cwd = resolve(flags.cwd);
  else if (config.run.setup_dir) {
    const source = resolve(config.run.setup_dir);
    if (!existsSync(source)) throw new UserError(`run.setup_dir: no such directory: ${source}`);
    environment.cwd = mkdtempSync(join(tmpdir(), "swerun-replay-"));
    fse.copySync(source, environment.cwd);
  }
  const cwd = environment.cwd;
  const hint = "give the checkout to replay in with --cwd DIR";
  if (!cwd) throw new UserError(`the trajectory records no working directory: ${hint}`);
  if (!existsSync(cwd) || !statSync(cwd).isDirectory()) {
    const recorded = cwd === recordedCwd ? " (the recorded run's directory, now gone)" : "";
    throw new UserError(`environment.cwd: no such directory: ${cwd}${recorded}: ${hint}`);
  }
}

function defaultOutput(path: string): string {
  const stem = basename(path).replace(/(\.traj)?\.json$/, "");
  return resolve("runs", `${stem}.replay-${timestampSlug()}.traj.json`);
}

interface Setup {
  trajectory: LoadedTrajectory;
  recorded: RecordedRun;
  config: SwerunConfig;
  environment: EnvironmentConfig;
  recordedCwd: string;
  until: number;
  output: string;
  /** `--report`, checked (`-`: standard output). */
  report: string | undefined;
}

function setup(path: string, flags: ReplayFlags): Setup {
  const trajectory = loadTrajectory(path);
  const specs = asList(flags.config);
  // A model that takes over keeps the recorded run's action style: tool calls, or text blocks.
  const toolCalls = trajectory.messages.some((m) => Array.isArray(m.tool_calls) && m.tool_calls.length > 0);
  const config = loadConfig(
    specs.filter((spec) => !isEnvironmentSpec(spec)),
    // The environment and the output path are the replay's own (below), not the continuing model's.
    runOverrides({ ...flags, environmentClass: undefined, output: undefined }),
    toolCalls ? "default" : "textbased",
  );
  const regex = config.model.action_regex;
  const recorded = recordedRun(trajectory, regex, regex === DEFAULT_ACTION_REGEX ? undefined : regex);
  const until = parseUntil(flags.until, recorded.steps.length) ?? recorded.steps.length;
  const envFlags: ConfigOverride[] = [
    { path: "environment.environment_class", value: flags.environmentClass, origin: "--environment-class" },
    { path: "environment.cwd", value: flags.cwd, origin: "--cwd" },
    { path: "environment.image", value: flags.image, origin: "--image" },
  ];
  const output = checkOutputPath(flags.output ?? defaultOutput(path), flags.output ? "-o" : "trajectory");
  if (output === resolve(path))
    throw new UserError(`-o ${flags.output}: that is the trajectory being replayed`);
  const report = flags.report ? reportTarget(flags.report, flags.events) : undefined;
  const { environment, notes, recordedCwd } = replayEnvironment(trajectory, specs, envFlags);
  for (const note of notes) process.stderr.write(`note: ${note}\n`);
  if (environment.environment_class === "local") prepareLocalCwd(environment, config, flags, recordedCwd);
  else if (until < recorded.steps.length && !flags.continue) environment.keep_container = true;
  return { trajectory, recorded, config, environment, recordedCwd, until, output, report };
}

/** Runs the agent from its restored messages to its end; what happened is the result (errors included). */
async function continueAgent(session: RunSession, agent: Agent): Promise<RunResult> {
  try {
    await agent.continue();
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
  const s = setup(path, flags);
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

async function replay(
  flags: ReplayFlags,
  s: Setup,
  runId: string,
  stream: SwarmEventStream | undefined,
): Promise<number> {
  stream?.start();
  const { trajectory, recorded, config, environment, until, output } = s;
  const tty = Boolean(process.stdin.isTTY);
  const color = Boolean(process.stdout.isTTY);
  const out = (line: string) => process.stdout.write(`${redact(line)}\n`);
  const bus = new EventBus();
  // The model that carries on is built before anything runs, so a bad model fails fast.
  const nextModel = flags.continue ? await createRunModel(config, bus) : undefined;
  const docker = environment.environment_class === "docker";
  const cwd = environment.cwd || (docker ? "/" : "");
  const where = docker ? `docker (${environment.image}, cwd ${cwd})` : `local (cwd ${cwd})`;
  const steps = recorded.steps.length;
  const table = new ReplayTable(color);
  const comparisons: StepComparison[] = [];
  const replayInfo = {
    trajectory: resolve(trajectory.path),
    trajectory_format: trajectory.kind,
    until: flags.until === undefined ? null : until,
    continue: Boolean(flags.continue),
    recorded_steps: steps,
    replayed_steps: 0,
    divergent_steps: [] as number[],
  };
  let replayModel: ReplayModel | undefined;
  const instanceId =
    typeof trajectory.extras.instance_id === "string" ? trajectory.extras.instance_id : undefined;
  const options: RunOptions = {
    // The environment is the replay's own; model and agent are the continuing model's.
    // run.setup_dir is copied by the replay itself (prepareLocalCwd), with --cwd and the recorded cwd.
    config: { ...config, environment, run: { ...config.run, setup_dir: undefined } },
    output,
    ...(instanceId ? { instanceId } : {}),
    runId,
    info: { replay: replayInfo },
    extras: trajectory.extras,
    bus,
    ...(stream ? { subscribers: [stream.listener] } : {}),
    interactive: tty,
    handleSignals: true,
    onProgress: (line) => process.stderr.write(`${line}\n`),
    model: (env) => {
      replayModel = new ReplayModel({
        run: recorded,
        until,
        handover: Boolean(flags.continue),
        observationTemplate: recordedObservationTemplate(trajectory) ?? config.model.observation_template,
        recordedModel: recordedModelConfig(trajectory),
        templateVars: env.templateVars(),
        addMessages: (messages) => session?.agent?.addMessages(...messages),
        onStep: ({ step, outputs, messages }) => {
          const cwds = { recorded: s.recordedCwd, replayed: cwd };
          const comparison = compareStep(step, replayedObservations(outputs, messages), cwds);
          comparisons.push(comparison);
          replayInfo.replayed_steps = comparison.step;
          if (comparison.status === "DIFFERENT") replayInfo.divergent_steps.push(comparison.step);
          for (const row of table.rows(comparison)) out(row);
        },
      });
      return replayModel;
    },
  };
  let session: RunSession | undefined;
  try {
    session = await openRun(options);
  } catch (error) {
    stream?.stop({ success: false, error });
    if (error instanceof OutputPathError) throw error;
    printRunEnd(await failedRun(options, error));
    throw runError(error);
  }
  const model = replayModel as ReplayModel;
  out(
    `Replaying ${until} of ${steps} steps of ${trajectory.path} (${trajectory.kind}, ${recorded.style} actions) in ${where}`,
  );
  let continuing = false;
  let result: RunResult;
  try {
    const limitsOff = {
      step_limit: 0,
      cost_limit: 0,
      wall_time_limit_seconds: 0,
      max_consecutive_format_errors: 0,
      mode: "yolo" as const,
    };
    let agent = session.createAgent({ agent: limitsOff, interactive: false });
    agent.restore(structuredClone(recorded.prefix), { nCalls: 0, cost: 0 });
    out(table.header());
    result = await continueAgent(session, agent);
    if (nextModel && result.exit_status === REPLAY_STOPPED && result.error === undefined) {
      out(pc.bold(`\n${nextModel.name} takes over after step ${model.replayedSteps}`));
      // The replayed messages (with the new observations) but not the replay's stop message, and the usage
      // so far, so step and cost limits count from the recorded run's.
      const replayed = agent;
      agent = session.createAgent({
        model: nextModel,
        subscribers: [consolePrinter({ color, firstStep: replayed.nCalls + 1 })],
      });
      agent.restore(replayed.messages.slice(0, -1), { nCalls: replayed.nCalls, cost: replayed.cost });
      continuing = true;
      result = await continueAgent(session, agent);
    } else if (nextModel && result.error === undefined) {
      out(`nothing to continue: the replay ended with ${result.exit_status}`);
    }
  } finally {
    await session.close();
  }
  stream?.stop({ success: result.error === undefined, error: result.error });
  if (result.error !== undefined) {
    printRunEnd(result);
    throw runError(result.error);
  }
  const stoppedEarly = result.exit_status === REPLAY_STOPPED && model.replayedSteps < steps;
  const report: ReplayReport = {
    trajectory: replayInfo.trajectory,
    trajectory_format: trajectory.kind,
    output,
    recorded_steps: steps,
    replayed_steps: model.replayedSteps,
    until: replayInfo.until,
    continued: continuing,
    ...tally(comparisons),
    steps: comparisons,
    exit_status: { recorded: recorded.exitStatus, replayed: String(result.exit_status ?? "") },
    submission: stoppedEarly
      ? { status: "not_compared", reason: `the replay stopped after step ${model.replayedSteps}` }
      : compareSubmissions(recorded.submission, String(result.submission ?? "")),
  };
  for (const line of table.summary(report)) out(line);
  out(`${pc.bold("trajectory:")} ${output}`);
  if (s.report) {
    writeReport(s.report, report);
    if (s.report !== "-") out(`${pc.bold("report:")} ${s.report}`);
  }
  if (!docker) {
    const inspect = stoppedEarly
      ? ` (stopped after step ${model.replayedSteps}; inspect it with: cd ${cwd})`
      : "";
    out(`${pc.bold("workdir:")} ${cwd}${inspect}`);
  }
  const compared = report.submission.status === "same" || report.submission.status === "different";
  if (!compared) return report.divergent_steps.length > 0 ? 1 : 0;
  return report.submission.status === "same" ? 0 : 1;
}
