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

  const cases: Array<[string, string, string | undefined, string[]]> = [
    [
      "no action",
      "Just thinking.",
      undefined,
      ["Expected exactly one action, found 0.", "actions=0", "finish=stop"],
    ],
    ["two actions", `${action("ls")}\n${action("pwd")}`, undefined, ["found 2.", "actions=2", "no tools"]],
    [
      "output cut at the token limit",
      `${action("ls")}\nand then`,
      "length",
      ["finish_reason: length", "finish=length"],
    ],
  ];
  for (const [name, content, finishReason, feedback] of cases) {
    it(`turns ${name} into a format error that keeps the response and its cost`, async () => {
      server.push({ body: completion({ content, ...(finishReason ? { finishReason } : {}) }) });
      const { model } = await testModel(server, {}, { textBased: true });
      const error = await caught(model.query(conversation));
      expect(error).toBeInstanceOf(FormatError);
      const [assistant, feedbackMessage, ...rest] = (error as FormatError).messages;
      expect(rest).toEqual([]);
      expect(assistant?.content).toBe(content);
      expect(messageCost(assistant as Message)).toBeGreaterThan(0);
      expect(feedbackMessage?.role).toBe("user");
      for (const text of feedback) expect(feedbackMessage?.content).toContain(text);
    });
  }
});
