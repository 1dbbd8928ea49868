// What `swerun replay` is set up from: its flags, the recorded trajectory and its steps, the config, the
// environment to run the commands again in (a local checkout it may copy) and the output path.
import { existsSync, statSync } from "node:fs";
import { basename, resolve } from "node:path";
import { loadConfig } from "../config/load.js";
import { isPlainObject } from "../config/merge.js";
import { type EnvironmentConfig, modelSchema, onHostFiles, type SwerunConfig } from "../config/schema.js";
import { UserError } from "../errors.js";
import { isEnvironmentSpec, replayEnvironment } from "../replay/config.js";
import { type RecordedRun, recordedRun } from "../replay/recorded.js";
import { checkOutputPath } from "../run/output.js";
import { reportTarget } from "../run/run-end.js";
import { copySetupDir } from "../run/setup-dir.js";
import { type LoadedTrajectory, loadTrajectory } from "../trajectory/reader.js";
import { asList } from "../util/as-list.js";
import { timestampSlug } from "../util/ids.js";
import { configOverrides, type FlagsOf } from "./options.js";

/** `swerun replay` flags (commands/options.ts). */
export type ReplayFlags = FlagsOf<"replay">;

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
export function recordedObservationTemplate(trajectory: LoadedTrajectory): string | undefined {
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

/** The model config the recorded run recorded (`info.config.model`). */
export function recordedModelConfig(trajectory: LoadedTrajectory): Record<string, unknown> {
  const config = isPlainObject(trajectory.info.config) ? trajectory.info.config : {};
  return isPlainObject(config.model) ? config.model : {};
}

/**
 * The local checkout: --cwd, else a fresh copy of run.setup_dir, else the recorded cwd if it still exists.
 * Returns whether it made a copy.
 */
function prepareLocalCwd(
  environment: EnvironmentConfig,
  config: SwerunConfig,
  flags: ReplayFlags,
  recordedCwd: string,
): boolean {
  const copy = !flags.cwd && Boolean(config.run.setup_dir);
  if (flags.cwd) environment.cwd = resolve(flags.cwd);
  else if (config.run.setup_dir) environment.cwd = copySetupDir(config.run.setup_dir, "swerun-replay-");
  const cwd = environment.cwd;
  const hint = "give the checkout to replay in with --cwd DIR";
  if (!cwd) throw new UserError(`the trajectory records no working directory: ${hint}`);
  if (!existsSync(cwd) || !statSync(cwd).isDirectory()) {
    const recorded = cwd === recordedCwd ? " (the recorded run's directory, now gone)" : "";
    throw new UserError(`environment.cwd: no such directory: ${cwd}${recorded}: ${hint}`);
  }
  return copy;
}

function defaultOutput(path: string): string {
  const stem = basename(path).replace(/(\.traj)?\.json$/, "");
  return resolve("runs", `${stem}.replay-${timestampSlug()}.traj.json`);
}

/** A replay, set up: what it replays, where, up to which step, and where it writes. */
export interface ReplaySetup {
  trajectory: LoadedTrajectory;
  recorded: RecordedRun;
  config: SwerunConfig;
  environment: EnvironmentConfig;
  recordedCwd: string;
  until: number;
  output: string;
  /** `--report`, checked (`-`: standard output). */
  report: string | undefined;
  /** The local working directory is a temporary copy of run.setup_dir the replay made. */
  madeCwd: boolean;
}

/**
 * Sets a replay up from its flags: reads the trajectory, loads the config (the environment is the replay's own),
 * checks `--until`, `-o` and `--report`, and prepares the local checkout; bad input is a UserError before anything runs.
 */
export function replaySetup(path: string, flags: ReplayFlags): ReplaySetup {
  const trajectory = loadTrajectory(path);
  const specs = asList(flags.config);
  // A model that takes over keeps the recorded run's action style: tool calls, or text blocks.
  const toolCalls = trajectory.messages.some((m) => Array.isArray(m.tool_calls) && m.tool_calls.length > 0);
  // The environment is the replay's own (below), not the continuing model's.
  const overrides = configOverrides("replay", flags);
  const envFlags = overrides.filter((override) => override.path.startsWith("environment."));
  const config = loadConfig(
    specs.filter((spec) => !isEnvironmentSpec(spec)),
    overrides.filter((override) => !envFlags.includes(override)),
    toolCalls ? "default" : "textbased",
  );
  const regex = config.model.action_regex;
  const recorded = recordedRun(trajectory, regex, regex === DEFAULT_ACTION_REGEX ? undefined : regex);
  const until = parseUntil(flags.until, recorded.steps.length) ?? recorded.steps.length;
  const output = checkOutputPath(flags.output ?? defaultOutput(path), flags.output ? "-o" : "trajectory");
  if (output === resolve(path))
    throw new UserError(`-o ${flags.output}: that is the trajectory being replayed`);
  const report = flags.report ? reportTarget(flags.report, flags.events) : undefined;
  const { environment, notes, recordedCwd } = replayEnvironment(trajectory, specs, envFlags);
  for (const note of notes) process.stderr.write(`note: ${note}\n`);
  const onHost = onHostFiles(environment);
  const madeCwd = onHost && prepareLocalCwd(environment, config, flags, recordedCwd);
  if (environment.environment_class === "docker" && until < recorded.steps.length && !flags.continue)
    environment.keep_container = true;
  return { trajectory, recorded, config, environment, recordedCwd, until, output, report, madeCwd };
}
