/**
 * swerun as a library: everything a program needs to run the agent and to extend it (its own model, its own
 * environment, an event subscriber). This is the package's only public entry point (`import ... from "swerun"`).
 */

// The agent loop and how a person takes part in it.
export { Agent, type AgentOptions } from "./agent/agent.js";
export type { Interaction } from "./agent/interaction.js";
export { InteractiveAgent, type InteractiveAgentOptions } from "./agent/interactive.js";
export { checkSubmission, SUBMIT_MARKER } from "./agent/submission.js";
// Config: loading (files, built-in names, key=value specs) and the schema with its types.
export { ConfigError, type ConfigOverride, loadConfig, readConfigFile } from "./config/load.js";
export {
  type AgentConfig,
  agentSchema,
  type BubblewrapEnvironmentConfig,
  configSchema,
  type DockerEnvironmentConfig,
  type EnvironmentConfig,
  environmentSchema,
  type LocalEnvironmentConfig,
  localEnvironmentSchema,
  MODEL_CLASSES,
  type ModelConfig,
  modelSchema,
  type RunConfig,
  type SwerunConfig,
} from "./config/schema.js";
// The terminal: the console printer (an event subscriber), the person as a model and as a confirmer.
export { HumanModel } from "./console/human-model.js";
export { TerminalInteraction } from "./console/interaction.js";
export { consolePrinter, type PrinterOptions } from "./console/printer.js";
// Environments: the interface, the implementations, the factory.
export { BubblewrapEnvironment } from "./environments/bubblewrap.js";
export { DockerContainerError, DockerEnvironment } from "./environments/docker/environment.js";
export type { Environment, EnvironmentContext, ExecuteOptions } from "./environments/environment.js";
export {
  createEnvironment,
  ENVIRONMENT_TYPES,
  serializeEnvironmentConfig,
} from "./environments/index.js";
export { LocalEnvironment } from "./environments/local.js";
// Errors: control flow of the loop (as mini-swe-agent's exceptions) and bad input.
export {
  errorExitMessage,
  exitMessage,
  FormatError,
  InterruptAgentFlow,
  LimitsExceeded,
  OutputPathError,
  StartupCommandFailed,
  Submitted,
  TimeExceeded,
  UserError,
  UserInterruption,
} from "./errors.js";
export { gradeTestLog, LOG_PARSER_NAMES, type LogGradingInstance, parseTestLog } from "./eval/grade-log.js";
export type { EvalType, TestStatus } from "./eval/harness-constants.js";
export { LogParserError } from "./eval/log-parsers/parser-error.js";
export type { ParserSpec } from "./eval/log-parsers/parser-spec.js";
// Grading without containers: the SWE-bench harness's 57 log parsers and its verdict on one test log.
export type { InstanceReport, TestsStatus } from "./eval/verdict.js";
// Events: what a run reports while it runs, and the bus subscribers listen on.
export {
  type AgentEvent,
  type AgentEventType,
  type AgentListener,
  EventBus,
  type EventInput,
} from "./events.js";
// Messages as they are in trajectories.
export type { Action, ExecOutput, Message, MessageExtra } from "./messages.js";
export { messageCost } from "./messages.js";
// Models: the interface, the implementations, the factory.
export { DeterministicModel, ScriptExhausted } from "./models/deterministic.js";
export { createModel, MODEL_TYPES, type ModelContext, serializeModelConfig } from "./models/index.js";
export type { Model, QueryOptions } from "./models/model.js";
export { MissingApiKeyError, OpenAIModel } from "./models/openai.js";
// The run pipeline: a run from a resolved config, with hooks and subscribers.
export { checkOutputPath, fallbackPath } from "./run/output.js";
export {
  type AgentSetup,
  createRunModel,
  failedRun,
  openRun,
  type RunHooks,
  type RunOptions,
  type RunResult,
  RunSession,
  runTask,
} from "./run/run.js";
// Templates: Jinja2-compatible rendering.
export { renderTemplate, TemplateError } from "./templates/render.js";
// Trajectories: writing them.
export {
  AGENT_TYPES,
  TRAJECTORY_FORMAT,
  type Trajectory,
  type TrajectoryInfo,
  trajectoryConfig,
  trajectoryInfo,
} from "./trajectory/format.js";
// Trajectories: reading any of mini-swe-agent's formats.
export { type LoadedTrajectory, loadTrajectory, type TrajectoryKind } from "./trajectory/reader.js";
export { TrajectoryWriter } from "./trajectory/writer.js";
