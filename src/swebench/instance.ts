import { existsSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Agent } from "../agent/agent.js";
import type { EventBus } from "../agent/events.js";
import { errorExitMessage } from "../agent/exceptions.js";
import type { SwerunConfig } from "../config/schema.js";
import type { Environment } from "../environments/environment.js";
import { createEnvironment } from "../environments/index.js";
import { createModel } from "../models/index.js";
import { renderTemplate } from "../templates/render.js";
import { TrajectoryWriter } from "../trajectory.js";
import { swerunVersion } from "../util/package-root.js";
import { withoutSecrets } from "../util/sanitize.js";
import type { Checkout } from "./checkout.js";
import type { Instance } from "./dataset.js";

/** How one instance ended. */
export interface InstanceResult {
  instance_id: string;
  exit_status: string;
  submission: string;
  cost: number;
  api_calls: number;
}

/** Exit statuses of runs that finished (a resumed batch skips them); anything else is run again. */
export const FINISHED_STATUSES = new Set([
  "Submitted",
  "LimitsExceeded",
  "TimeExceeded",
  "RepeatedFormatError",
]);

export function trajectoryPath(outputDir: string, instanceId: string): string {
  return join(outputDir, instanceId, `${instanceId}.traj.json`);
}

/** The exit status recorded in an instance's finished trajectory, if it has one. */
export function recordedStatus(outputDir: string, instanceId: string): string | undefined {
  const path = trajectoryPath(outputDir, instanceId);
  if (!existsSync(path)) return undefined;
  try {
    return String(JSON.parse(readFileSync(path, "utf8")).info?.exit_status ?? "");
  } catch {
    return undefined;
  }
}

export interface InstanceContext {
  config: SwerunConfig;
  outputDir: string;
  runId: string;
  bus: EventBus;
  /** Sets the instance's image or local checkout; may return a checkout to remove afterwards. */
  prepare: (config: SwerunConfig, instance: Instance) => Promise<Checkout | undefined>;
  /** Lets the batch stop this instance's agent (second Ctrl-C, SIGTERM). */
  onAgent: (agent: Agent | undefined) => void;
}

/**
 * Runs one instance in its own environment with its own model. The trajectory is written to a
 * `.partial` file and renamed over the old one only when the run ends, so a resumed batch never loses
 * a finished result to an interrupted rerun. Failures before the agent starts still get a trajectory.
 */
export async function runInstance(instance: Instance, context: InstanceContext): Promise<InstanceResult> {
  const id = instance.instance_id;
  const config = structuredClone(context.config);
  const finalPath = trajectoryPath(context.outputDir, id);
  const partial = `${finalPath}.partial`;
  config.agent.output_path = partial;
  config.agent.mode = "yolo";
  const scripted = instance.swerun_scripted_outputs;
  if (config.model.model_class === "deterministic" && Array.isArray(scripted))
    config.model.outputs = scripted;
  let env: Environment | undefined;
  let checkout: Checkout | undefined;
  let agent: Agent | undefined;
  try {
    checkout = await context.prepare(config, instance);
    env = await createEnvironment(config.environment, { runId: context.runId, instanceId: id });
    if (config.run.env_startup_command) {
      const command = renderTemplate(
        config.run.env_startup_command,
        { ...instance },
        "run.env_startup_command",
      );
      const output = await env.execute({ command });
      if (output.returncode !== 0) {
        throw new StartupCommandFailed(
          `env_startup_command exited with ${output.returncode}: ${output.output.trim().slice(-2000)}`,
        );
      }
    }
    const model = await createModel(config.model, { emit: (event) => context.bus.emit(event) });
    agent = new Agent({
      model,
      env,
      config: config.agent,
      bus: context.bus,
      extras: { instance_id: id },
      defaultAgentClass: "default", // mini-swe-agent runs batches with its default agent
    });
    context.onAgent(agent);
    const result = await agent.run(instance.problem_statement, { instance_id: id });
    return finish(agent, result);
  } catch (error) {
    if (agent) {
      await agent.flush().catch(() => {});
      return finish(agent, agent.messages.at(-1)?.extra ?? {});
    }
    await writeFailure(partial, config, id, error);
    return { instance_id: id, exit_status: errorName(error), submission: "", cost: 0, api_calls: 0 };
  } finally {
    context.onAgent(undefined);
    await env?.close().catch(() => {});
    checkout?.remove();
    if (existsSync(partial)) renameSync(partial, finalPath);
  }

  function finish(done: Agent, extra: Record<string, unknown>): InstanceResult {
    return {
      instance_id: id,
      exit_status: String(extra.exit_status ?? ""),
      submission: String(extra.submission ?? ""),
      cost: done.cost,
      api_calls: done.nCalls,
    };
  }
}

/** The env_startup_command failed: the instance ends before the agent starts. */
export class StartupCommandFailed extends Error {}

function errorName(error: unknown): string {
  return error instanceof Error ? error.constructor.name : "Error";
}

async function writeFailure(path: string, config: SwerunConfig, id: string, error: unknown): Promise<void> {
  rmSync(path, { force: true });
  const exit = errorExitMessage(error);
  const { outputs: _outputs, ...model } = withoutSecrets(config.model);
  const writer = new TrajectoryWriter(path);
  writer.save(
    {
      model_stats: { instance_cost: 0, api_calls: 0 },
      config: {
        agent: { ...config.agent },
        agent_type: "swerun.agent.Agent",
        model,
        model_type: `swerun.models.${config.model.model_class}`,
        environment: withoutSecrets({ ...config.environment }),
        environment_type: `swerun.environments.${config.environment.environment_class}`,
      },
      mini_version: swerunVersion(),
      exit_status: String(exit.extra?.exit_status ?? ""),
      submission: "",
    },
    [exit],
    { instance_id: id },
  );
  await writer.flush();
}
