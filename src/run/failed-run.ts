import { serializeEnvironmentConfig } from "../environments/index.js";
import { errorExitMessage, OutputPathError } from "../errors.js";
import { MODEL_TYPES, serializeModelConfig } from "../models/index.js";
import { AGENT_TYPES, trajectoryConfig, trajectoryInfo } from "../trajectory/format.js";
import { TrajectoryWriter } from "../trajectory/writer.js";
import { fallbackPath } from "./output.js";
import type { RunOptions, RunResult } from "./run-options.js";

/**
 * Records a run that failed before its agent existed (output check aside): a trajectory holding only the
 * exit message, with the configs as their classes would have recorded them. Calls the `onEnd` hook.
 */
export async function failedRun(options: RunOptions, error: unknown): Promise<RunResult> {
  const exit = errorExitMessage(error);
  const result: RunResult = {
    exit_status: exit.extra.exit_status,
    submission: "",
    cost: 0,
    api_calls: 0,
    trajectory: undefined,
    error,
    messages: [exit],
  };
  if (options.output !== undefined && !(error instanceof OutputPathError)) {
    const { config } = options;
    const model =
      config.agent.mode === "human" && options.interactive
        ? { model: { model_name: "human" }, model_type: MODEL_TYPES.human }
        : serializeModelConfig(config.model);
    const agentConfig = { ...config.agent, output_path: options.output };
    const info = trajectoryInfo(
      trajectoryConfig(
        agentConfig,
        model,
        serializeEnvironmentConfig(config.environment),
        options.agentType ??
          AGENT_TYPES[config.agent.agent_class ?? options.defaultAgentClass ?? "interactive"],
      ),
      { cost: 0, apiCalls: 0 },
      exit,
      options.info,
    );
    const fallback = options.trajectoryFallback === false ? {} : { fallback: fallbackPath(options.output) };
    const writer = new TrajectoryWriter(options.output, fallback);
    writer.save(info, [exit], options.extras);
    try {
      await writer.flush();
      result.trajectory = writer.path;
    } catch {
      // no path could be written: the result says no trajectory exists, and why
    }
    if (writer.failure) result.trajectoryFailure = writer.failure;
  }
  await options.hooks?.onEnd?.(result);
  return result;
}
