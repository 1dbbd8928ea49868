import { describe, expect, it } from "vitest";
import { FormatError } from "../../src/errors.js";
import { type Message, messageCost } from "../../src/messages.js";
import { completion, testModel, useOpenAIServer } from "../helpers/openai-server.js";

const server = useOpenAIServer();

const conversation: Message[] = [{ role: "user", content: "Do the task." }];
const action = (command: string) => `\`\`\`mswea_bash_command\n${command}\n\`\`\``;

async function caught(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe("OpenAIModel, text-based", () => {
  it("parses exactly one action from the content and sends no tools", async () => {
    server.push({ body: completion({ content: `Listing files.\n${action("ls -la")}` }) });
    const { model } = await testModel(server, {}, { textBased: true });
    const message = await model.query(conversation);
    expect(server.requests[0]?.body.tools).toBeUndefined();
    expect(server.requests[0]?.body.messages).toEqual([{ role: "user", content: "Do the task." }]);
    expect(message.extra?.actions).toEqual([{ command: "ls -la" }]);
    const [observation] = model.formatObservations(
      message,
      [{ output: "x", returncode: 0, exception_info: "" }],
      {},
    );
    expect(observation).toMatchObject({ role: "user", content: "<returncode>0</returncode>x" });
    expect(observation?.tool_call_id).toBeUndefined();
  });

  // Text-based models give the template `error`, `actions` and `finish_reason` (no `has_tool_calls`), as mini-swe-agent.
  const template = {
    format_error_template: "ERROR: {{ error }} | actions={{ actions | length }} | finish={{ finish_reason }}",
  };
  const cases: Array<[string, string, string | undefined, string[]]> = [
    [
      "no action",
      "Just thinking.",
      undefined,
      ["Expected exactly 1 action, found 0.", "actions=0", "finish=stop"],
    ],
    ["two actions", `${action("ls")}\n${action("pwd")}`, undefined, ["found 2.", "actions=2"]],
    [
      "output cut at the token limit",
      "```mswea_bash_command\nls -la",
      "length",
      ["found 0.", "finish=length"],
    ],
  ];
  for (const [name, content, finishReason, feedback] of cases) {
    it(`turns ${name} into a format error: one user message keeping the reply and its cost`, async () => {
      server.push({ body: completion({ content, ...(finishReason ? { finishReason } : {}) }) });
      const { model } = await testModel(server, template, { textBased: true });
      const error = await caught(model.query(conversation));
      expect(error).toBeInstanceOf(FormatError);
      const [feedbackMessage, ...rest] = (error as FormatError).messages;
      expect(rest).toEqual([]);
      expect(feedbackMessage?.role).toBe("user");
      expect(feedbackMessage?.extra).toMatchObject({
        interrupt_type: "FormatError",
        model_response: content,
      });
      expect(messageCost(feedbackMessage as Message)).toBeGreaterThan(0);
      expect(feedbackMessage?.extra?.response).toMatchObject({ id: "chatcmpl-test" });
      for (const text of feedback) expect(feedbackMessage?.content).toContain(text);
    });
  }

  it("runs the one action of a reply cut at the token limit, as mini-swe-agent", async () => {
    server.push({ body: completion({ content: `${action("ls")}\nand then`, finishReason: "length" }) });
    const { model } = await testModel(server, template, { textBased: true });
    expect((await model.query(conversation)).extra?.actions).toEqual([{ command: "ls" }]);
  });
});
