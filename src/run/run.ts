import { rmSync } from "node:fs";
import { InteractiveAgent } from "../agent/interactive.js";
import { onHostFiles, type SwerunConfig } from "../config/schema.js";
import type { Environment } from "../environments/environment.js";
import { createEnvironment } from "../environments/index.js";
import { OutputPathError, StartupCommandFailed } from "../errors.js";
import { EventBus } from "../events.js";
import { createModel } from "../models/index.js";
import type { Model } from "../models/model.js";
import { renderTemplate } from "../templates/render.js";
import { newRunId } from "../util/ids.js";
import { failedRun } from "./failed-run.js";
import { checkOutputPath } from "./output.js";
import type { RunOptions, RunResult } from "./run-options.js";
import { RunSession } from "./run-session.js";
import { copySetupDir } from "./setup-dir.js";
import { abortStartup, onInterruptSignals } from "./signals.js";

/** The model of a config: the person at the terminal in human mode, else `createModel`. */
export async function createRunModel(config: SwerunConfig, bus: EventBus): Promise<Model> {
  if (config.agent.mode === "human")
    return new (await import("../console/human-model.js")).HumanModel(config.model);
  return createModel(config.model, { emit: (event) => bus.emit(event) });
}

/**
 * Starts a run: checks the output path (OutputPathError before anything else), builds the model, starts the
 * environment and runs `run.env_startup_command` (StartupCommandFailed when it exits non-zero). On failure
 * everything started so far is torn down and the error is thrown; `failedRun` records it.
 */
export async function openRun(options: RunOptions): Promise<RunSession> {
  const { config } = options;
  const output = options.output === undefined ? undefined : checkOutputPath(options.output);
  const bus = options.bus ?? new EventBus();
  for (const subscriber of options.subscribers ?? []) bus.subscribe(subscriber);
  let session: RunSession | undefined;
  const signals = options.handleSignals
    ? onInterruptSignals({
        interrupt: () => {
          const agent = session?.agent;
          if (!agent) abortStartup();
          else if (agent instanceof InteractiveAgent)
            agent.interrupt(); // it asks the user what next
          else agent.stop();
        },
        stop: () => (session?.agent ? session.agent.stop() : abortStartup()),
      })
    : undefined;
  let env: Environment | undefined = options.environment;
  let workdir: string | undefined;
  try {
    const setupDir = config.run.setup_dir;
    let environment = config.environment;
    if (setupDir && !env && onHostFiles(environment)) {
      workdir = copySetupDir(setupDir);
      environment = { ...environment, cwd: workdir };
    }
    const given = options.model ?? (await createRunModel(config, bus));
    env ??= await createEnvironment(environment, {
      runId: options.runId ?? newRunId(),
      ...(options.instanceId ? { instanceId: options.instanceId } : {}),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      ...(options.onPodPhase ? { onPodPhase: options.onPodPhase } : {}),
    });
    await runStartupCommand(env, config, options.startupVars ?? options.vars ?? {});
    const model = typeof given === "function" ? await given(env) : given;
    session = new RunSession(options, { env, bus, model, output, workdir, signals });
    return session;
  } catch (error) {
    signals?.dispose();
    await env?.close().catch(() => {});
    // The run never started: its copy of run.setup_dir is of no use (a started run's is the command's to end).
    if (workdir) rmSync(workdir, { recursive: true, force: true });
    throw error;
  }
}

async function runStartupCommand(env: Environment, config: SwerunConfig, vars: Record<string, unknown>) {
  const source = config.run.env_startup_command;
  if (!source) return;
  const command = renderTemplate(source, vars, "run.env_startup_command");
  const output = await env.execute({ command });
  if (output.returncode !== 0) {
    throw new StartupCommandFailed(
      `run.env_startup_command exited with ${output.returncode}: ${output.output.trim().slice(-2000)}`,
    );
  }
}

/** A run that failed before its agent started, with the raw task as the agent records it (reports read it). */
function failedStart(task: string, options: RunOptions, error: unknown): Promise<RunResult> {
  return failedRun({ ...options, info: { ...options.info, task } }, error);
}

/**
 * The sequence of a SWE-bench instance (a batch's or `swebench-single`'s): `prepare` what the task needs (its
 * checkout or image), then `runTask`; whatever throws on the way (but the `passThrough` errors, thrown on)
 * is recorded as a run that failed before its agent started (`failedRun`).
 */
export async function runPreparedTask(
  task: string,
  options: RunOptions,
  prepare: () => Promise<void>,
  passThrough: (error: unknown) => boolean = () => false,
): Promise<RunResult> {
  try {
    await prepare();
    return await runTask(task, options);
  } catch (error) {
    if (passThrough(error)) throw error;
    return failedStart(task, options, error);
  }
}

/**
 * Runs `task` from start to end: `openRun`, one agent, `agent.run`, `finish`, `close`. Never throws for what
 * happens during the run (a failed startup command, a broken environment, a template error): that is recorded
 * in the trajectory and returned in `result.error`. Throws OutputPathError when the output cannot be written.
 */
export async function runTask(task: string, options: RunOptions): Promise<RunResult> {
  let session: RunSession;
  try {
    session = await openRun(options);
  } catch (error) {
    if (error instanceof OutputPathError) throw error;
    return failedStart(task, options, error);
  }
  try {
    const agent = session.createAgent();
    let error: unknown;
    try {
      await agent.run(task, options.vars ?? {});
    } catch (thrown) {
      error = thrown;
    }
    return await session.finish(agent, error);
  } finally {
    await session.close();
  }
}
