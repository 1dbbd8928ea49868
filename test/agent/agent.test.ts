import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ScriptExhausted } from "../../src/models/deterministic.js";
import { act, SUBMIT, scriptedAgent } from "../helpers/agent.js";
import { completion, OpenAIServer, testModel } from "../helpers/openai-server.js";

const readTrajectory = (path: string) => JSON.parse(readFileSync(path, "utf8"));

describe("Agent with the scripted model and the local environment", () => {
  it("runs actions, submits, and writes a mini-swe-agent trajectory", async () => {
    const { agent, output_path } = scriptedAgent({
      outputs: [act("echo hi > hello.txt && cat hello.txt"), SUBMIT],
    });
    const result = await agent.run("write hello");
    // mini-swe-agent's keys, and the command that submitted as it ran (its readers ignore that key).
    expect(result).toEqual({
      exit_status: "Submitted",
      submission: "the-patch\n",
      submit_action: {
        command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && echo the-patch",
        returncode: 0,
        duration_s: expect.any(Number),
        timestamp: expect.any(Number),
      },
    });
    const trajectory = readTrajectory(output_path);
    expect(Object.keys(trajectory)).toEqual(["info", "messages", "trajectory_format"]);
    expect(trajectory.trajectory_format).toBe("mini-swe-agent-1.1");
    expect(Object.keys(trajectory.info)).toEqual([
      "model_stats",
      "config",
      "mini_version",
      "exit_status",
      "submission",
      "task",
    ]);
    expect(trajectory.info.task).toBe("write hello");
    expect(trajectory.info.model_stats).toEqual({ instance_cost: 1, api_calls: 2 });
    expect(Object.keys(trajectory.info.config)).toEqual([
      "agent",
      "agent_type",
      "model",
      "model_type",
      "environment",
      "environment_type",
    ]);
    expect(trajectory.info).toMatchObject({ exit_status: "Submitted", submission: "the-patch\n" });
    const roles = trajectory.messages.map((message: { role: string }) => message.role);
    // As mini-swe-agent: the command that submitted gets no observation message.
    expect(roles).toEqual(["system", "user", "assistant", "user", "assistant", "exit"]);
    expect(trajectory.messages[0].content).toBe("You are a test agent on Linux.");
    expect(trajectory.messages[1].content).toBe("Task: write hello");
    const observation = trajectory.messages[3];
    expect(observation.content).toBe("<returncode>0</returncode>\n<output>\nhi\n</output>");
    expect(observation.extra).toMatchObject({ raw_output: "hi\n", returncode: 0, exception_info: "" });
    expect(typeof observation.extra.duration_s).toBe("number");
    expect(typeof observation.extra.timestamp).toBe("number");
    const assistant = trajectory.messages[2];
    expect(assistant.extra).toMatchObject({
      actions: [{ command: "echo hi > hello.txt && cat hello.txt" }],
      cost: 0.5,
    });
    expect(typeof assistant.extra.duration_s).toBe("number");
    expect(trajectory.messages[5]).toEqual({
      role: "exit",
      content: "the-patch\n",
      extra: { ...result },
    });
  });

  it("stops at the step limit before the next model call", async () => {
    const { agent, output_path } = scriptedAgent({
      outputs: [act("true"), act("true"), act("true")],
      agent: { step_limit: 2 },
    });
    expect((await agent.run("loop")).exit_status).toBe("LimitsExceeded");
    expect(agent.nCalls).toBe(2);
    expect(readTrajectory(output_path).info).toMatchObject({
      exit_status: "LimitsExceeded",
      model_stats: { api_calls: 2 },
    });
  });

  it("stops at the cost limit", async () => {
    const { agent, events } = scriptedAgent({
      outputs: [act("true", 1), act("true", 1), act("true", 1)],
      agent: { cost_limit: 2 },
    });
    expect((await agent.run("spend")).exit_status).toBe("LimitsExceeded");
    expect(agent.cost).toBe(2);
    expect(
      events.some((event) => event.type === "limit_reached" && event.exit_status === "LimitsExceeded"),
    ).toBe(true);
  });

  it("stops at the wall-time limit with TimeExceeded", async () => {
    const { agent } = scriptedAgent({
      outputs: [act("sleep 1.2"), act("true")],
      agent: { wall_time_limit_seconds: 1 },
    });
    expect((await agent.run("slow")).exit_status).toBe("TimeExceeded");
    expect(agent.nCalls).toBe(1);
  });

  it("runs nothing for a scripted output without extra.actions, as mini-swe-agent", async () => {
    const { agent, output_path, events } = scriptedAgent({
      outputs: [
        { role: "assistant", content: "```mswea_bash_command\nls\n```", extra: { cost: 0.25 } },
        SUBMIT,
      ],
    });
    expect((await agent.run("nothing")).exit_status).toBe("Submitted");
    const messages = readTrajectory(output_path).messages;
    expect(messages.map((m: { role: string }) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "assistant",
      "exit",
    ]);
    expect(agent.cost).toBe(0.75);
    expect(events.filter((event) => event.type === "action_start")).toHaveLength(1);
  });

  it("feeds format errors back as mini-swe-agent's user message, counting their cost, and recovers", async () => {
    const server = await OpenAIServer.start();
    try {
      server.push(
        { body: completion({ content: "no block here" }) },
        {
          body: completion({
            content: "```mswea_bash_command\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```",
          }),
        },
      );
      const { model } = await testModel(
        server,
        { format_error_template: "Format error: {{error}} Found {{actions|length}} actions." },
        { textBased: true },
      );
      const { agent, events } = scriptedAgent({ outputs: [], modelOverride: model });
      expect((await agent.run("fmt")).exit_status).toBe("Submitted");
      expect(agent.messages.map((m) => m.role)).toEqual(["system", "user", "user", "assistant", "exit"]);
      expect(agent.messages[2]).toMatchObject({
        content: "Format error: Expected exactly 1 action, found 0. Found 0 actions.",
        extra: { interrupt_type: "FormatError", n_actions: 0, model_response: "no block here" },
      });
      expect(agent.cost).toBeCloseTo(2 * (100e-6 + 40e-6), 12);
      expect(events.filter((event) => event.type === "format_error")).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it("ends with RepeatedFormatError after max_consecutive_format_errors in a row", async () => {
    const server = await OpenAIServer.start();
    try {
      const two = "```mswea_bash_command\nls\n```\n```mswea_bash_command\npwd\n```";
      for (const content of ["none", "```mswea_bash_command\ntrue\n```", two, "none", "none"]) {
        server.push({ body: completion({ content }) });
      }
      const { model } = await testModel(
        server,
        { format_error_template: "{{ error }}" },
        { textBased: true },
      );
      const { agent } = scriptedAgent({
        outputs: [],
        agent: { max_consecutive_format_errors: 3 },
        modelOverride: model,
      });
      expect((await agent.run("fmt")).exit_status).toBe("RepeatedFormatError");
      expect(agent.nCalls).toBe(5);
      expect(agent.messages.at(-1)).toMatchObject({
        role: "exit",
        extra: { exit_status: "RepeatedFormatError" },
      });
    } finally {
      await server.close();
    }
  });

  it("records an uncaught error with its class and stack, saves, and re-raises", async () => {
    const { agent, output_path } = scriptedAgent({ outputs: [act("echo one")] });
    await expect(agent.run("crash")).rejects.toBeInstanceOf(ScriptExhausted);
    const trajectory = readTrajectory(output_path);
    expect(trajectory.info.exit_status).toBe("ScriptExhausted");
    const exit = trajectory.messages.at(-1);
    expect(exit.role).toBe("exit");
    expect(exit.extra.traceback).toMatch(/ScriptExhausted: deterministic model: the script has 1 outputs/);
    expect(trajectory.messages.filter((m: { role: string }) => m.role === "user")).toHaveLength(2);
  });

  it("kills a command's process group on timeout and tells the model", async () => {
    const { agent, output_path } = scriptedAgent({
      outputs: [act("sleep 300 & echo $! > child.pid; echo waiting; wait"), act("cat child.pid"), SUBMIT],
      environment: { timeout: 1 },
      model: {
        observation_template: "{{output.exception_info}}|{{output.returncode}}|{{output.output}}",
      },
    });
    await agent.run("timeout");
    const messages = readTrajectory(output_path).messages;
    expect(messages[3].content).toMatch(
      /^An error occurred while executing the command: Command 'sleep 300 & echo \$! > child.pid; echo waiting; wait' timed out after 1 seconds\|-1\|waiting\n$/,
    );
    const pid = Number(messages[5].extra.raw_output);
    const stat = (() => {
      try {
        return readFileSync(`/proc/${pid}/stat`, "utf8");
      } catch {
        return "gone";
      }
    })();
    expect(stat === "gone" || /^\d+ \(.*\) [ZX]/.test(stat)).toBe(true);
  });

  it("shows the model the template's view of huge and binary output, and records the truncation", async () => {
    const { agent, output_path } = scriptedAgent({
      outputs: [act("head -c 50000 /dev/zero | tr '\\0' y; printf '\\377'"), SUBMIT],
      environment: { max_output_bytes: 20000 },
      model: {
        observation_template:
          "{% if output.output | length < 10000 %}{{output.output}}{% else %}{{ output.output[:10] }}…{{ output.output[-3:] }}{% endif %}",
      },
    });
    await agent.run("big");
    const observation = readTrajectory(output_path).messages[3];
    expect(observation.content).toBe("yyyyyyyyyy…yy\uFFFD");
    expect(observation.extra.truncated).toEqual({ total_bytes: 50001, elided_bytes: 30001 });
    expect(observation.extra.raw_output.length).toBeLessThan(20200);
  });

  it("answers tool-call actions with tool messages carrying their ids, in order", async () => {
    const toolCalls = {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_1", type: "function", function: { name: "bash", arguments: '{"command":"echo a"}' } },
        { id: "call_2", type: "function", function: { name: "bash", arguments: '{"command":"echo b"}' } },
      ],
      extra: {
        actions: [
          { command: "echo a", tool_call_id: "call_1" },
          { command: "echo b", tool_call_id: "call_2" },
        ],
        cost: 0,
      },
    };
    const { agent } = scriptedAgent({
      outputs: [toolCalls, SUBMIT],
      model: { model_class: "deterministic_toolcall" },
    });
    await agent.run("tools");
    expect(agent.messages.slice(3, 5)).toMatchObject([
      { role: "tool", tool_call_id: "call_1", extra: { raw_output: "a\n" } },
      { role: "tool", tool_call_id: "call_2", extra: { raw_output: "b\n" } },
    ]);
  });

  it("gives templates the run's counters and the task", async () => {
    const { agent } = scriptedAgent({
      outputs: [act("true"), act("true"), SUBMIT],
      model: {
        observation_template:
          "calls={{n_model_calls}} cost={{model_cost}} t={{elapsed_seconds}} task={{task}}",
      },
    });
    await agent.run("count");
    // model_cost is a float, printed as Python prints it.
    expect(agent.messages[5]?.content).toBe("calls=2 cost=1.0 t=0 task=count");
  });

  it("emits events in order for subscribers", async () => {
    const { agent, events } = scriptedAgent({ outputs: [act("echo x"), SUBMIT] });
    await agent.run("events");
    const types = events.map((event) => event.type).filter((type) => type !== "message" && type !== "saved");
    expect(types).toEqual([
      "run_start",
      "agent_start",
      "model_call_start",
      "model_call_end",
      "action_start",
      "action_end",
      "model_call_start",
      "model_call_end",
      "action_start",
      "action_end",
      "run_end",
    ]);
    const end = events.find((event) => event.type === "action_end");
    expect(end).toMatchObject({ returncode: 0, output_chars: 2, output: "x\n" });
    const start = events.find((event) => event.type === "agent_start");
    expect(start).toMatchObject({ messages: 2, model: agent.model.name });
  });

  it("ends with UserInterruption when stopped", async () => {
    const stopped = scriptedAgent({ outputs: [act("sleep 300"), SUBMIT] });
    stopped.agent.bus.subscribe((event) => {
      if (event.type === "action_start") stopped.agent.stop();
    });
    expect((await stopped.agent.run("stop")).exit_status).toBe("UserInterruption");
    expect(JSON.parse(readFileSync(stopped.output_path, "utf8")).info.exit_status).toBe("UserInterruption");
  });
});
