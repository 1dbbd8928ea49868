import { describe, expect, it } from "vitest";
import { callModel, runAction } from "../../src/agent/calls.js";
import { localEnvironmentSchema } from "../../src/config/schema.js";
import { LocalEnvironment } from "../../src/environments/local.js";
import { exitMessage, FormatError, InterruptAgentFlow } from "../../src/errors.js";
import { type AgentEvent, EventBus } from "../../src/events.js";
import type { Message } from "../../src/messages.js";
import type { Model } from "../../src/models/model.js";
import { tempDir } from "../helpers/tmp.js";

/** A model whose one answer is given: a message to return, or an error to throw. */
function answering(answer: Message | Error): Model {
  return {
    name: "given",
    query: async () => {
      if (answer instanceof Error) throw answer;
      return answer;
    },
    formatObservations: () => [],
    templateVars: () => ({}),
    serialize: () => ({ model: {}, model_type: "test.Given" }),
  };
}

/** Calls `model` as call 4; what the bus saw, and whether the call counted before `model_call_end`. */
async function call(model: Model) {
  const bus = new EventBus();
  const seen: string[] = [];
  const events: AgentEvent[] = [];
  bus.subscribe((event) => {
    seen.push(event.type);
    events.push(event);
  });
  const counted = () => seen.push("counted");
  const signal = new AbortController().signal;
  const result = await callModel(model, [], { call: 4, signal, bus, counted }).catch(
    (error: unknown) => error,
  );
  return { result, seen, end: events.find((event) => event.type === "model_call_end") };
}

describe("callModel", () => {
  it("counts a reply before announcing its end, and records how long the call took", async () => {
    const reply: Message = {
      role: "assistant",
      content: "x",
      extra: { cost: 0.5, usage: { prompt_tokens: 3 } },
    };
    const { result, seen, end } = await call(answering(reply));
    expect(result).toBe(reply);
    expect(seen).toEqual(["model_call_start", "counted", "model_call_end"]);
    expect(end).toMatchObject({ call: 4, replied: true, cost: 0.5, usage: { prompt_tokens: 3 } });
    expect(reply.extra?.duration_s).toBeGreaterThanOrEqual(0);
  });

  it("keeps a duration the model recorded itself", async () => {
    const reply: Message = { role: "assistant", content: "x", extra: { duration_s: 12 } };
    await call(answering(reply));
    expect(reply.extra?.duration_s).toBe(12);
  });

  it("counts a reply that could not be run, and a failed call, but not a stand-in that ends the run", async () => {
    const feedback: Message = {
      role: "user",
      content: "bad",
      extra: { interrupt_type: "FormatError", cost: 0.25 },
    };
    const formatError = await call(answering(new FormatError(feedback)));
    expect(formatError.result).toBeInstanceOf(FormatError);
    expect(formatError.seen).toEqual(["model_call_start", "counted", "model_call_end"]);
    expect(formatError.end).toMatchObject({ replied: true, cost: 0.25 });

    const failed = await call(answering(new Error("HTTP 500")));
    expect(failed.seen).toEqual(["model_call_start", "counted", "model_call_end"]);
    expect(failed.end).toMatchObject({ replied: false, cost: 0 });

    const recorded: Message = { role: "assistant", content: "recorded" };
    const standIn = await call(answering(new InterruptAgentFlow(recorded, exitMessage("UserInterruption"))));
    expect(standIn.seen).toEqual(["model_call_start", "model_call_end"]);
    expect(standIn.end).toMatchObject({ replied: true });
    const quit = await call(answering(new InterruptAgentFlow(exitMessage("UserInterruption"))));
    expect(quit.end).toMatchObject({ replied: false });
  });
});

describe("runAction", () => {
  it("runs the command between action_start and action_end, recording its duration on the output", async () => {
    const env = new LocalEnvironment(
      localEnvironmentSchema.parse({ environment_class: "local", cwd: tempDir() }),
    );
    const bus = new EventBus();
    const events: AgentEvent[] = [];
    bus.subscribe((event) => events.push(event));
    const action = { command: "printf 'a\\nb'; exit 3" };
    const output = await runAction(env, action, { step: 2, signal: new AbortController().signal, bus });
    expect(output).toMatchObject({ output: "a\nb", returncode: 3 });
    expect(output.extra?.duration_s).toBeGreaterThanOrEqual(0);
    expect(events.map((event) => event.type)).toEqual(["action_start", "action_end"]);
    expect(events[1]).toMatchObject({
      step: 2,
      action,
      returncode: 3,
      duration_s: output.extra?.duration_s,
      output_chars: 3,
      output: "a\nb",
      exception_info: "",
    });
    await env.close();
  });
});
