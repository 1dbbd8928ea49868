import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Interaction } from "../../src/agent/interaction.js";
import type { Message } from "../../src/messages.js";
import { LEGACY_ACTION_REGEX, recordedObservation, recordedRun } from "../../src/replay/recorded.js";
import { type LoadedTrajectory, loadTrajectory } from "../../src/trajectory/reader.js";
import { packageRoot } from "../../src/util/package-root.js";
import { act, SUBMIT, scriptedAgent } from "../helpers/agent.js";

const FIXTURES = join(packageRoot(), "test", "fixtures", "replay");
const REGEX = "```mswea_bash_command\\s*\\n(.*?)\\n```";

const trajectory = (
  messages: Message[],
  kind: LoadedTrajectory["kind"] = "mini-swe-agent-1.1",
  info = {},
): LoadedTrajectory => ({
  path: "x.traj.json",
  kind,
  info,
  messages,
  extras: {},
});

async function recordedFromAgent(outputs: Array<Record<string, unknown>>, interaction?: Interaction) {
  const { agent, output_path } = scriptedAgent({ outputs, interaction, agent: { confirm_exit: false } });
  await agent.run("the task");
  return recordedRun(loadTrajectory(output_path), REGEX);
}

describe("recordedRun: the steps of a trajectory", () => {
  it("groups a swerun run into steps with their actions and recorded outputs", async () => {
    const run = await recordedFromAgent([act("printf 'a\\nb'"), act("exit 4"), SUBMIT]);
    expect(run.prefix.map((m) => m.role)).toEqual(["system", "user"]);
    expect(run.steps.map((s) => [s.step, s.kind, s.actions.map((a) => a.command)])).toEqual([
      [1, "actions", ["printf 'a\\nb'"]],
      [2, "actions", ["exit 4"]],
      [3, "actions", ["echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && echo the-patch"]],
    ]);
    expect(run.steps[0]?.observations).toEqual([
      { returncode: 0, output: "a\nb", exception_info: "", rendered: false },
    ]);
    expect(run.steps[1]?.observations[0]?.returncode).toBe(4);
    expect(run).toMatchObject({ exitStatus: "Submitted", submission: "the-patch\n", style: "text" });
    expect(run.exit?.role).toBe("exit");
  });

  it("keeps a scripted output without extra.actions as a step that runs nothing (as mini-swe-agent)", async () => {
    const run = await recordedFromAgent([
      { role: "assistant", content: "no block here" },
      act("echo hi"),
      SUBMIT,
    ]);
    expect(run.steps.map((s) => [s.kind, s.actions.length])).toEqual([
      ["actions", 0],
      ["actions", 1],
      ["actions", 1],
    ]);
    expect(run.steps[0]?.assistant?.content).toBe("no block here");
    expect(run.steps[0]?.after).toEqual([]);
  });

  it("keeps rejected actions as steps that run nothing", async () => {
    let asked = 0;
    const interaction: Interaction = {
      confirmActions: async () => (asked++ === 0 ? "not that" : null),
      onInterrupt: async () => "",
      confirmExit: async () => null,
    };
    const run = await recordedFromAgent([act("rm -rf nothing-here"), SUBMIT], interaction);
    expect(run.steps.map((s) => s.kind)).toEqual(["rejected", "actions"]);
    expect(run.steps[0]?.after[0]?.content).toBe("The user rejected your command: not that");
  });

  it("reads mini-swe-agent 2.x tool calls: several actions per step, format errors without a response", () => {
    const run = recordedRun(loadTrajectory(join(FIXTURES, "mini-swe-agent-toolcall.traj.json")), REGEX);
    expect(run.style).toBe("toolcall");
    expect(run.steps.map((s) => [s.kind, s.actions.length, s.observations.length])).toEqual([
      ["actions", 1, 1],
      ["format_error", 0, 0],
      ["actions", 3, 3],
      ["actions", 1, 1],
    ]);
    expect(run.steps[1]?.assistant).toBeUndefined();
    expect(run.steps[2]?.actions[1]).toEqual({ command: "wc -c < greeting.txt", tool_call_id: "call_c3" });
    expect(run.steps[2]?.observations[1]).toMatchObject({ returncode: 0, output: "13\n" });
    expect(run).toMatchObject({ exitStatus: "Submitted", submission: "hello, world\n" });
  });

  it("parses the actions of a bare message list with the ```bash regex and turns its last message into the submission", () => {
    const run = recordedRun(loadTrajectory(join(FIXTURES, "bare-list.traj.json")), REGEX);
    expect(run.steps.map((s) => [s.kind, s.actions.map((a) => a.command)])).toEqual([
      ["actions", ["ls"]],
      ["format_error", []],
      ["actions", ["cat greeting.txt; exit 3"]],
      [
        "actions",
        ["echo 'hello, world' > greeting.txt && echo MINI_SWE_AGENT_FINAL_OUTPUT && cat greeting.txt"],
      ],
    ]);
    expect(run.steps[2]?.observations[0]).toEqual({
      returncode: 3,
      output: "hello\n",
      exception_info: "",
      rendered: false,
    });
    expect(run.steps[3]?.observations[0]).toEqual({
      returncode: null,
      output: "MINI_SWE_AGENT_FINAL_OUTPUT\nhello, world\n",
      exception_info: "",
      rendered: false,
    });
    expect(run).toMatchObject({ exitStatus: "Submitted", submission: "hello, world\n" });
  });

  it("uses the configured regex for text that is not recorded as actions", () => {
    const messages: Message[] = [
      { role: "user", content: "task" },
      { role: "assistant", content: "<cmd>ls -a</cmd>" },
      { role: "user", content: "<returncode>0</returncode>\n<output>\n.\n..\n</output>" },
    ];
    const run = recordedRun(trajectory(messages, "message-list"), REGEX, "<cmd>(.*?)</cmd>");
    expect(run.steps[0]?.actions).toEqual([{ command: "ls -a" }]);
    expect(recordedRun(trajectory(messages, "message-list"), REGEX).steps[0]?.kind).toBe("format_error");
    const recordedRegex = trajectory(messages, "mini-swe-agent-1", {
      config: { agent: { action_regex: "<cmd>(.*?)</cmd>" } },
    });
    expect(recordedRun(recordedRegex, LEGACY_ACTION_REGEX).steps[0]?.kind).toBe("actions");
  });

  it("keeps user messages between steps for the step they precede, and a run cut off without an exit", () => {
    const raw = JSON.parse(readFileSync(join(FIXTURES, "mini-swe-agent-toolcall.traj.json"), "utf8"));
    const note = { role: "user", content: "try harder", extra: { interrupt_type: "UserInterruption" } };
    const messages = [...raw.messages.slice(0, 4), note, ...raw.messages.slice(5, 9)];
    const run = recordedRun(trajectory(messages), REGEX);
    expect(run.steps.map((s) => s.before.map((m) => m.content))).toEqual([[], ["try harder"]]);
    expect(run.exit).toBeUndefined();
    expect(run.exitStatus).toBe("");
  });
});

describe("recordedObservation", () => {
  it("reads the raw output when recorded, else parses mini-swe-agent's observation template", () => {
    expect(
      // As a file may hold it: the keys mini-swe-agent writes, not all of them.
      recordedObservation({
        role: "user",
        content: "x",
        extra: { raw_output: "out", returncode: 2 },
      } as Message),
    ).toEqual({
      returncode: 2,
      output: "out",
      exception_info: "",
      rendered: false,
    });
    const timeout =
      "<exception>timed out</exception>\n<returncode>-1</returncode>\n<output>\npartial</output>";
    expect(recordedObservation({ role: "user", content: timeout })).toEqual({
      returncode: -1,
      output: "partial",
      exception_info: "timed out",
      rendered: false,
    });
    expect(recordedObservation({ role: "user", content: "Observation: hi" })).toEqual({
      returncode: null,
      output: "Observation: hi",
      exception_info: "",
      rendered: true,
    });
    const padded = {
      role: "tool",
      content: "",
      extra: { raw_output: "", returncode: -1, exception_info: "action was not executed" },
    } as Message;
    expect(recordedObservation(padded)).toBeUndefined();
  });
});
