import { describe, expect, it } from "vitest";
import { FormatError } from "../../src/errors.js";
import { type Message, messageCost } from "../../src/messages.js";
import { BASH_TOOL } from "../../src/models/toolcall-actions.js";
import { completion, TEST_KEY, testModel, toolCall, useOpenAIServer } from "../helpers/openai-server.js";

const server = useOpenAIServer();

const conversation = (): Message[] => [
  { role: "system", content: "You are a test.", extra: { timestamp: 1 } },
  { role: "user", content: "Do the task.", extra: { interrupt_type: "UserNewTask", note: "never sent" } },
];

async function formatErrorOf(promise: Promise<unknown>): Promise<FormatError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(FormatError);
  return error as FormatError;
}

describe("OpenAIModel with tool calls", () => {
  it("sends the conversation, the bash tool and the model kwargs, and returns the call as an action", async () => {
    server.push({
      body: completion({
        toolCalls: [toolCall("call_1", { command: "ls -la" })],
        usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 },
      }),
    });
    const { model } = await testModel(server, {
      model_kwargs: {
        temperature: 0.2,
        max_tokens: 512,
        top_p: 0.9,
        reasoning_effort: "low",
        extra_headers: { "X-Title": "swerun-test" },
        extra_body: { seed: 7 },
        drop_params: true,
        timeout: 30,
      },
    });
    const message = await model.query(conversation());

    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.url).toBe("/v1/chat/completions");
    expect(request?.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
    expect(request?.headers["x-title"]).toBe("swerun-test");
    const { messages, tools, ...rest } = request?.body ?? {};
    expect(messages).toEqual([
      { role: "system", content: "You are a test." },
      { role: "user", content: "Do the task." },
    ]);
    expect(tools).toEqual([BASH_TOOL]);
    expect(rest).toEqual({
      model: "test-model",
      temperature: 0.2,
      max_tokens: 512,
      top_p: 0.9,
      reasoning_effort: "low",
      seed: 7,
    });

    expect(message.role).toBe("assistant");
    expect(message.content).toBeNull();
    expect(message.tool_calls).toEqual([toolCall("call_1", { command: "ls -la" })]);
    expect(message.extra?.actions).toEqual([{ command: "ls -la", tool_call_id: "call_1" }]);
    expect(message.extra?.cost).toBeCloseTo(1000 * 1e-6 + 100 * 2e-6, 12);
    expect(message.extra?.usage).toEqual({ prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 });
    expect((message.extra?.response as { id?: string } | undefined)?.id).toBe("chatcmpl-test");
    expect(message.extra?.duration_s).toBeGreaterThan(0);
    expect(message.extra?.timestamp).toBeGreaterThan(1_700_000_000);
  });

  it("runs several tool calls in order and answers each with a tool message", async () => {
    const calls = [toolCall("call_a", { command: "echo a" }), toolCall("call_b", { command: "echo b" })];
    server.push({ body: completion({ toolCalls: calls }) });
    const { model } = await testModel(server);
    const message = await model.query(conversation());
    expect(message.extra?.actions).toEqual([
      { command: "echo a", tool_call_id: "call_a" },
      { command: "echo b", tool_call_id: "call_b" },
    ]);
    const output = (text: string) => ({ output: text, returncode: 0, exception_info: "" });
    const observations = model.formatObservations(message, [output("a\n"), output("b\n")], {});
    expect(observations.map((o) => [o.role, o.tool_call_id, o.content])).toEqual([
      ["tool", "call_a", "<returncode>0</returncode>a\n"],
      ["tool", "call_b", "<returncode>0</returncode>b\n"],
    ]);
    const partial = model.formatObservations(message, [output("a\n")], {});
    expect(partial.map((o) => [o.tool_call_id, o.extra?.returncode, o.extra?.exception_info])).toEqual([
      ["call_a", 0, ""],
      ["call_b", -1, "action was not executed"],
    ]);
  });

  it("sends back only the fields a chat API accepts, keeping the provider's reasoning", async () => {
    server.push({ body: completion({ toolCalls: [toolCall("call_2", { command: "pwd" })] }) });
    const { model } = await testModel(server);
    const history: Message[] = [
      ...conversation(),
      {
        role: "assistant",
        content: null,
        refusal: null,
        annotations: [],
        reasoning_content: "thinking",
        tool_calls: [toolCall("call_1", { command: "ls" })],
        extra: { actions: [{ command: "ls", tool_call_id: "call_1" }], cost: 0.1, response: { id: "x" } },
      },
      {
        role: "tool",
        tool_call_id: "call_1",
        content: "file.txt",
        extra: { raw_output: "file.txt", returncode: 0, timestamp: 2, exception_info: "" },
      },
      { role: "exit", content: "", extra: { exit_status: "Submitted", submission: "" } },
    ];
    await model.query(history);
    expect(server.requests[0]?.body.messages.slice(2)).toEqual([
      {
        role: "assistant",
        content: null,
        reasoning_content: "thinking",
        tool_calls: [toolCall("call_1", { command: "ls" })],
      },
      { role: "tool", tool_call_id: "call_1", content: "file.txt" },
    ]);
  });

  describe("format errors: one user message with mini-swe-agent's error text, the call's cost and response", () => {
    const cases: Array<{ name: string; response: ReturnType<typeof completion>; feedback: string[] }> = [
      {
        name: "arguments that are not JSON",
        response: completion({ toolCalls: [toolCall("call_1", "{not json")] }),
        feedback: [
          "ERROR: Error parsing tool call arguments: Expecting property name enclosed in double quotes: line 1 column 2 (char 1).Missing 'command' argument in bash tool call.",
          "actions=0",
          "with tools",
          "finish=tool_calls",
        ],
      },
      {
        name: "an unknown tool",
        response: completion({ toolCalls: [toolCall("call_1", { command: "ls" }, "python")] }),
        feedback: ["ERROR: Unknown tool 'python'. |"],
      },
      {
        name: "a missing command",
        response: completion({ toolCalls: [toolCall("call_1", { cmd: "ls" })] }),
        feedback: ["Missing 'command' argument in bash tool call."],
      },
      {
        name: "one bad call among good ones",
        response: completion({
          toolCalls: [toolCall("call_1", { command: "ls" }), toolCall("call_2", { command: 42 })],
        }),
        feedback: ["The 'command' argument must be a string.", "actions=0"],
      },
      {
        name: "output cut at the token limit",
        response: completion({ toolCalls: [toolCall("call_1", '{"command": "ec')], finishReason: "length" }),
        feedback: ["Unterminated string starting at: line 1 column 13 (char 12)", "finish=length"],
      },
    ];
    for (const { name, response, feedback } of cases) {
      it(name, async () => {
        server.push({ body: response });
        const { model } = await testModel(server);
        const error = await formatErrorOf(model.query(conversation()));
        expect(error.messages).toHaveLength(1);
        const [answer] = error.messages;
        expect(answer?.role).toBe("user");
        expect(answer?.extra?.interrupt_type).toBe("FormatError");
        expect(messageCost(answer as Message)).toBeCloseTo(100 * 1e-6 + 20 * 2e-6, 12);
        expect((answer?.extra?.response as { id?: string } | undefined)?.id).toBe("chatcmpl-test");
        for (const text of feedback) expect(answer?.content).toContain(text);
      });
    }

    it("a response without tool calls gets the feedback as a user message", async () => {
      server.push({ body: completion({ content: "I will just talk." }) });
      const { model } = await testModel(server);
      const error = await formatErrorOf(model.query(conversation()));
      expect(error.messages).toHaveLength(1);
      expect(error.messages[0]?.role).toBe("user");
      expect(error.messages[0]?.content).toBe(
        "ERROR: No tool calls found in the response. Every response MUST include at least one tool call. | actions=0 | no tools | finish=stop",
      );
    });

    it("runs the tool calls of a reply cut at the token limit when they parse, as mini-swe-agent", async () => {
      server.push({
        body: completion({ toolCalls: [toolCall("call_1", { command: "ls" })], finishReason: "length" }),
      });
      const { model } = await testModel(server);
      expect((await model.query(conversation())).extra?.actions).toEqual([
        { command: "ls", tool_call_id: "call_1" },
      ]);
    });
  });
});
