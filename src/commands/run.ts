import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import fse from "fs-extra";
import pc from "picocolors";
import { Agent } from "../agent/agent.js";
import { type ConfigOverride, loadConfig } from "../config/load.js";
import type { SwerunConfig } from "../config/schema.js";
import { TerminalInteraction } from "../console/interaction.js";
import { consolePrinter } from "../console/printer.js";
import { ask } from "../console/prompt.js";
import type { Environment } from "../environments/environment.js";
import { createEnvironment } from "../environments/index.js";
import { UserError } from "../errors.js";
import { EventBus } from "../events.js";
import { createModel } from "../models/index.js";
import { newRunId, timestampSlug } from "../util/ids.js";
import { redact } from "../util/secrets.js";
import { agentSignals } from "./signals.js";

/** `swerun run` flags, as cac hands them over. */
export interface RunFlags {
  task?: string;
  model?: string;
  modelClass?: string;
  environmentClass?: string;
  config?: string | string[];
  output?: string;
  costLimit?: number;
  yolo?: boolean;
  exitImmediately?: boolean;
}

export function asList(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value.map(String) : [String(value)];
}

/** CLI flags that override config values. */
export function runOverrides(flags: RunFlags): ConfigOverride[] {
  return [
    { path: "model.model_name", value: flags.model, origin: "--model" },
    { path: "model.model_class", value: flags.modelClass, origin: "--model-class" },
    { path: "environment.environment_class", value: flags.environmentClass, origin: "--environment-class" },
    { path: "agent.cost_limit", value: flags.costLimit, origin: "--cost-limit" },
    { path: "agent.output_path", value: flags.output, origin: "--output" },
    { path: "agent.mode", value: flags.yolo ? "yolo" : undefined, origin: "--yolo" },
    {
      path: "agent.confirm_exit",
      value: flags.exitImmediately ? false : undefined,
      origin: "--exit-immediately",
    },
  ];
}

/** Copies the config's `run.setup_dir` into a fresh temporary directory and makes it the local cwd. */
function prepareWorkdir(config: SwerunConfig): string | undefined {
  const setupDir = config.run.setup_dir;
  if (!setupDir) return undefined;
  const source = resolve(setupDir);
  if (!fse.existsSync(source)) throw new UserError(`run.setup_dir: no such directory: ${source}`);
  const workdir = mkdtempSync(join(tmpdir(), "swerun-"));
  fse.copySync(source, workdir);
  if (config.environment.environment_class === "local") config.environment.cwd = workdir;
  return workdir;
}

/** `swerun run`: one task, one agent, one trajectory. Returns the exit code. */
export async function runCommand(flags: RunFlags): Promise<number> {
  const specs = asList(flags.config);
  const config = loadConfig(specs, runOverrides(flags));
  const tty = Boolean(process.stdin.isTTY);
  if (!tty) config.agent.mode = "yolo";
  let task = flags.task ?? config.run.task;
  if (!task && tty) task = await ask(pc.bold("What should the agent do? "));
  if (!task) throw new UserError("no task: give one with -t/--task (or set run.task in the config)");
  config.agent.output_path = resolve(
    config.agent.output_path ?? join("runs", `run-${timestampSlug()}.traj.json`),
  );
  const workdir = prepareWorkdir(config);
  const runId = newRunId();
  const bus = new EventBus();
  bus.subscribe(consolePrinter({ color: Boolean(process.stdout.isTTY) }));
  let agent: Agent | undefined;
  const signals = agentSignals(() => agent, tty);
  let env: Environment;
  try {
    env = await createEnvironment(config.environment, {
      runId,
      onProgress: (line) => process.stderr.write(`${line}\n`),
    });
  } catch (error) {
    signals.dispose();
    throw error;
  }
  try {
    if (config.run.env_startup_command) {
      const output = await env.execute({ command: config.run.env_startup_command });
      if (output.returncode !== 0) {
        throw new UserError(
          `run.env_startup_command failed with exit code ${output.returncode}: ${output.output.trim().slice(-500)}`,
        );
      }
    }
    const interaction = tty
      ? new TerminalInteraction(config.agent.mode, config.agent.whitelist_actions, undefined, signals.reset)
      : undefined;
    const model =
      config.agent.mode === "human"
        ? new (await import("../console/human-model.js")).HumanModel(config.model)
        : await createModel(config.model, { emit: (event) => bus.emit(event) });
    agent = new Agent({ model, env, config: config.agent, bus, interaction });
    const result = await agent.run(task);
    const path = config.agent.output_path;
    process.stdout.write(`${pc.bold("exit status:")} ${String(result.exit_status)}\n`);
    process.stdout.write(`${pc.bold("trajectory:")} ${path}\n`);
    if (workdir) process.stdout.write(`${pc.bold("workdir:")} ${workdir}\n`);
    return 0;
  } catch (error) {
    if (agent && config.agent.output_path) {
      process.stderr.write(redact(`trajectory (with the error recorded): ${config.agent.output_path}\n`));
    }
    throw error;
  } finally {
    signals.dispose();
    await env.close();
  }
}
