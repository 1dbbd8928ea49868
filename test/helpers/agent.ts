import { join } from "node:path";
import { Agent } from "../../src/agent/agent.js";
import type { Interaction } from "../../src/agent/interaction.js";
import { InteractiveAgent } from "../../src/agent/interactive.js";
import { agentSchema, localEnvironmentSchema, modelSchema } from "../../src/config/schema.js";
import { LocalEnvironment } from "../../src/environments/local.js";
import { type AgentEvent, EventBus } from "../../src/events.js";
import { DeterministicModel } from "../../src/models/deterministic.js";
import { DeterministicToolcallModel } from "../../src/models/deterministic-toolcall.js";
import type { Model } from "../../src/models/model.js";
import { TrajectoryWriter } from "../../src/trajectory/writer.js";
import { tempDir } from "./tmp.js";

export const OBSERVATION =
  "<returncode>{{output.returncode}}</returncode>\n<output>\n{{ output.output -}}\n</output>";

/** A scripted output running one command, in mini-swe-agent's shape. */
export const act = (command: string, cost = 0.5) => ({
  role: "assistant",
  content: `Running it.\n\n\`\`\`mswea_bash_command\n${command}\n\`\`\``,
  extra: { actions: [{ command }], cost },
});

export const SUBMIT = act("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && echo the-patch");

export interface Scenario {
  outputs: Array<Record<string, unknown>>;
  agent?: Record<string, unknown>;
  environment?: Record<string, unknown>;
  model?: Record<string, unknown>;
  interaction?: Interaction;
  /** A model to use instead of the scripted one (e.g. an OpenAIModel at the test server). */
  modelOverride?: Model;
}

/** An agent with the scripted model and the real local environment, writing its trajectory to a temp dir. */
export function scriptedAgent(scenario: Scenario) {
  const dir = tempDir();
  const output_path = join(dir, "run.traj.json");
  const config = agentSchema.parse({
    system_template: "You are a test agent on {{system}}.",
    instance_template: "Task: {{task}}",
    output_path,
    ...scenario.agent,
  });
  const modelConfig = modelSchema.parse({
    model_class: "deterministic",
    observation_template: OBSERVATION,
    format_error_template: "Format error: {{error}} Found {{actions|length}} actions.",
    outputs: scenario.outputs,
    ...scenario.model,
  });
  const model =
    scenario.modelOverride ??
    (modelConfig.model_class === "deterministic_toolcall"
      ? new DeterministicToolcallModel(modelConfig)
      : new DeterministicModel(modelConfig));
  const env = new LocalEnvironment(
    localEnvironmentSchema.parse({ environment_class: "local", cwd: dir, ...scenario.environment }),
  );
  const bus = new EventBus();
  const events: AgentEvent[] = [];
  bus.subscribe((event) => events.push(event));
  const writer = new TrajectoryWriter(output_path);
  const options = { model, env, config, bus, writer };
  const { interaction } = scenario;
  const agent = interaction ? new InteractiveAgent({ ...options, interaction }) : new Agent(options);
  return { agent, events, dir, output_path };
}
