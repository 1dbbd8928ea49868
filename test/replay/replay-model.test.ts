import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agent/agent.js";
import type { Interaction } from "../../src/agent/interaction.js";
import { agentSchema, localEnvironmentSchema } from "../../src/config/schema.js";
import { LocalEnvironment } from "../../src/environments/local.js";
import type { Message } from "../../src/messages.js";
import { type RecordedRun, recordedRun } from "../../src/replay/recorded.js";
import { type ReplayedStep, ReplayModel, type ReplayModelOptions } from "../../src/replay/replay-model.js";
import { loadTrajectory } from "../../src/trajectory/reader.js";
import { packageRoot } from "../../src/util/package-root.js";
import { act, OBSERVATION, SUBMIT, scriptedAgent } from "../helpers/agent.js";
import { tempDir } from "../helpers/tmp.js";

const REGEX = "```mswea_bash_command\\s*\\n(.*?)\\n```";

/** Runs the scripted agent in its own temp dir and returns what it recorded. */
async function record(
  outputs: Array<Record<string, unknown>>,
  options: {
    agent?: Record<string, unknown>;
    interaction?: Interaction;
    files?: Record<string, string>;
  } = {},
) {
  const { agent, output_path, dir } = scriptedAgent({
    outputs,
    agent: options.agent,
    interaction: options.interaction,
  });
  for (const [name, content] of Object.entries(options.files ?? {})) writeFileSync(join(dir, name), content);
  await agent.run("the task");
  return { run: recordedRun(loadTrajectory(output_path), REGEX), messages: agent.messages, dir };
}

/** Replays `run` with a fresh agent in `cwd`, the way `swerun replay` does (limits off). */
async function replay(run: RecordedRun, cwd: string, options: Partial<ReplayModelOptions> = {}) {
  const steps: ReplayedStep[] = [];
  let agent: Agent | undefined;
  const model = new ReplayModel({
    run,
    observationTemplate: OBSERVATION,
    addMessages: (messages) => agent?.addMessages(...messages),
    onStep: (step) => steps.push(step),
    ...options,
  });
  const env = new LocalEnvironment(localEnvironmentSchema.parse({ environment_class: "local", cwd }));
  const config = agentSchema.parse({
    system_template: "",
    instance_template: "",
    cost_limit: 0,
    max_consecutive_format_errors: 0,
  });
  agent = new Agent({ model, env, config });
  agent.addMessages(...structuredClone(run.prefix));
  const result = await agent.runLoop();
  return { agent, result, steps, model };
}

const shape = (messages: Message[]) =>
  messages.map((m) => [m.role, m.extra?.interrupt_type ?? m.extra?.exit_status ?? ""]);

describe("ReplayModel", () => {
  it("returns the recorded responses in order; the conversation gets the new observations", async () => {
    const recorded = await record(
      [act("cat note.txt"), act("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat note.txt", 0.25)],
      {
        files: { "note.txt": "original\n" },
      },
    );
    expect(recorded.run.submission).toBe("original\n");
    const cwd = tempDir();
    writeFileSync(join(cwd, "note.txt"), "changed\n");
    const { agent, result, steps } = await replay(recorded.run, cwd);
    expect(shape(agent.messages)).toEqual(shape(recorded.messages));
    expect(agent.messages[2]).toMatchObject({ role: "assistant", content: recorded.messages[2]?.content });
    expect(agent.messages[3]?.content).toBe("<returncode>0</returncode>\n<output>\nchanged\n</output>");
    expect(result).toMatchObject({ exit_status: "Submitted", submission: "changed\n" });
    expect(steps.map((s) => [s.step.step, s.outputs.map((o) => o.output)])).toEqual([
      [1, ["changed\n"]],
      // The command that submitted gets no observation (as in mini-swe-agent), so its step reports none.
      [2, []],
    ]);
    expect(agent.cost).toBe(0.75);
  });

  it("adds steps that ran nothing, rejections and the recorded exit as recorded", async () => {
    let asked = 0;
    const interaction: Interaction = {
      confirmActions: async () => (asked++ === 1 ? "no" : null),
      onInterrupt: async () => "",
      confirmExit: async () => null,
    };
    const outputs = [
      act("echo one"),
      { role: "assistant", content: "two blocks? none" },
      act("echo rejected"),
      act("echo four"),
    ];
    const recorded = await record(outputs, { agent: { step_limit: 4 }, interaction });
    expect(recorded.run.exitStatus).toBe("LimitsExceeded");
    const { agent, result, steps } = await replay(recorded.run, tempDir());
    expect(shape(agent.messages)).toEqual(shape(recorded.messages));
    expect(agent.messages.slice(4, 7).map((m) => m.content)).toEqual(
      recorded.messages.slice(4, 7).map((m) => m.content),
    );
    expect(result.exit_status).toBe("LimitsExceeded");
    expect(steps.map((s) => [s.step.kind, s.outputs.length])).toEqual([
      ["actions", 1],
      ["actions", 0], // a scripted output without extra.actions runs nothing
      ["rejected", 0],
      ["actions", 1],
    ]);
  });

  it("stops after --until steps, or hands over, with a ReplayStopped exit", async () => {
    const recorded = await record([act("echo 1"), act("echo 2"), SUBMIT]);
    const until = await replay(recorded.run, tempDir(), { until: 1 });
    expect(until.result.exit_status).toBe("ReplayStopped");
    expect(until.agent.messages.at(-1)?.content).toBe("Replay stopped after step 1 of 3 (--until 1).");
    expect(until.model.replayedSteps).toBe(1);
    const handover = await replay(recorded.run, tempDir(), { until: 2, handover: true });
    expect(handover.agent.messages.at(-1)?.content).toBe("Replayed 2 recorded steps; a model takes over.");
    expect(handover.agent.messages.filter((m) => m.role === "assistant")).toHaveLength(2);
  });

  it("ends with ReplayStopped when the recorded run submitted and the replay did not, or the recording just ends", async () => {
    const recorded = await record([act("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat patch.txt")], {
      files: { "patch.txt": "the patch\n" },
    });
    expect(recorded.run.exitStatus).toBe("Submitted");
    const cwd = tempDir();
    const { result, agent } = await replay(recorded.run, cwd);
    expect(result).toMatchObject({ exit_status: "ReplayStopped", submission: "" });
    expect(agent.messages.at(-1)?.content).toBe(
      "The recorded run submitted after step 1; the replay did not.",
    );
    const cut = { ...recorded.run, exit: undefined, exitStatus: "" };
    expect((await replay(cut, cwd)).agent.messages.at(-1)?.content).toBe(
      "The recorded trajectory ends after step 1 without an exit message.",
    );
  });

  it("submits on mini-swe-agent's old marker, as the recorded run did", async () => {
    const trajectory = loadTrajectory(
      join(packageRoot(), "test", "fixtures", "replay", "bare-list.traj.json"),
    );
    const run = recordedRun(trajectory, REGEX);
    const cwd = tempDir();
    writeFileSync(join(cwd, "greeting.txt"), "hello\n");
    const { result, steps } = await replay(run, cwd);
    expect(result).toMatchObject({ exit_status: "Submitted", submission: "hello, world\n" });
    expect(steps.map((s) => s.outputs.map((o) => o.returncode))).toEqual([[0], [], [3], [0]]);
  });

  it("adds recorded user messages between steps before the step they precede", async () => {
    const recorded = await record([act("echo 1"), act("echo 2"), SUBMIT]);
    const note: Message = {
      role: "user",
      content: "look again",
      extra: { interrupt_type: "UserInterruption" },
    };
    const second = recorded.run.steps[1];
    if (!second) throw new Error("no second step");
    second.before = [note];
    const { agent } = await replay(recorded.run, tempDir());
    const index = agent.messages.findIndex((m) => m.content === "look again");
    expect(agent.messages[index - 1]?.extra?.raw_output).toBe("1\n");
    expect(agent.messages[index + 1]?.role).toBe("assistant");
  });

  it("serializes as a replay of the recorded model, without scripted outputs", () => {
    const model = new ReplayModel({
      run: { prefix: [], steps: [], trailing: [], exitStatus: "", submission: "", style: "text" },
      observationTemplate: "",
      recordedModel: { model_name: "openai/gpt-5", outputs: [1, 2] },
      addMessages: () => {},
    });
    expect(model.name).toBe("openai/gpt-5");
    expect(model.serialize()).toEqual({
      model: { model_name: "openai/gpt-5" },
      model_type: "swerun.replay.ReplayModel",
    });
  });
});
