import { describe, expect, it } from "vitest";
import { errorExitMessage, exitMessage } from "../src/errors.js";
import { actionsOf, contentText, exitOf, type Message, messageCost } from "../src/messages.js";

describe("messages", () => {
  it("reads how a conversation ended from its last message, and only from an exit message", () => {
    const exit = exitMessage("Submitted", "the patch");
    expect(exitOf([{ role: "system", content: "s" }, exit])).toEqual({
      exit_status: "Submitted",
      submission: "the patch",
    });
    expect(exitOf([exit, { role: "user", content: "after" }])).toBeUndefined();
    expect(exitOf([])).toBeUndefined();
    expect(exitOf([errorExitMessage(new TypeError("boom"))])).toMatchObject({
      exit_status: "TypeError",
      submission: "",
      exception_str: "boom",
      exit_code: 1,
    });
  });

  it("reads a message's actions whatever its role, as mini-swe-agent does; none when absent", () => {
    const actions = [{ command: "ls", tool_call_id: "call_1" }];
    expect(actionsOf({ role: "assistant", content: "x", extra: { actions } })).toEqual(actions);
    expect(actionsOf({ role: "assistant", content: "x" })).toEqual([]);
    // A scripted output is the config's record as written: its role is not checked.
    const scripted: Message = JSON.parse(JSON.stringify({ role: "user", content: "x", extra: { actions } }));
    expect(actionsOf(scripted)).toEqual(actions);
    expect(actionsOf({ role: "user", content: "x", extra: { interrupt_type: "UserNewTask" } })).toEqual([]);
  });

  it("counts a message's recorded cost, 0 when none or not a finite number", () => {
    expect(messageCost({ role: "assistant", content: "", extra: { cost: 0.25 } })).toBe(0.25);
    expect(messageCost({ role: "assistant", content: "" })).toBe(0);
    expect(messageCost({ role: "assistant", content: "", extra: { cost: Number.NaN } })).toBe(0);
    const feedback: Message = {
      role: "user",
      content: "Format error",
      extra: { interrupt_type: "FormatError", cost: 0.5 },
    };
    expect(messageCost(feedback)).toBe(0.5);
  });

  it("gives a content as text: a string as it is, the text parts of a list joined, else empty", () => {
    expect(contentText("plain")).toBe("plain");
    const parts = [
      { type: "text", text: "a" },
      { type: "image_url", image_url: { url: "data:," } },
      { type: "input_text", text: "b" },
    ];
    expect(contentText(parts)).toBe("ab");
    expect(contentText(null)).toBe("");
  });

  it("keeps the keys a provider adds to a message: typed ones typed, the rest as they came", () => {
    const reply: Message = {
      role: "assistant",
      content: null,
      reasoning_content: "thinking",
      thinking_blocks: [{ type: "thinking", thinking: "t", signature: "s" }],
      tool_calls: [
        { id: "call_1", type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } },
      ],
      extra: { actions: [{ command: "ls", tool_call_id: "call_1" }], cost: 0.1, provider_specific: 1 },
    };
    expect(JSON.parse(JSON.stringify(reply))).toEqual(reply);
  });
});
