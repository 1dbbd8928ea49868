import { describe, expect, it } from "vitest";
import { defaultCacheControl, setCacheControl } from "../../src/models/cache-control.js";

describe("setCacheControl", () => {
  it("marks only the last message and clears older marks, without touching the input", () => {
    const messages = [
      { role: "system", content: "sys" },
      { role: "user", content: [{ type: "text", text: "old", cache_control: { type: "ephemeral" } }] },
      { role: "user", content: "task" },
    ];
    const before = structuredClone(messages);
    const marked = setCacheControl(messages, "default_end");
    expect(messages).toEqual(before);
    expect(marked).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: [{ type: "text", text: "old" }] },
      { role: "user", content: [{ type: "text", text: "task", cache_control: { type: "ephemeral" } }] },
    ]);
  });

  it("puts the mark on a tool message itself", () => {
    const marked = setCacheControl([{ role: "tool", tool_call_id: "c1", content: "out" }], "default_end");
    expect(marked).toEqual([
      { role: "tool", tool_call_id: "c1", content: "out", cache_control: { type: "ephemeral" } },
    ]);
  });

  it("puts the mark on a message without content (tool calls only) itself, as mini-swe-agent does", () => {
    const marked = setCacheControl([{ role: "assistant", content: null, tool_calls: [] }], "default_end");
    expect(marked).toEqual([
      { role: "assistant", content: null, tool_calls: [], cache_control: { type: "ephemeral" } },
    ]);
  });

  it("is on by default for Claude models only", () => {
    expect(defaultCacheControl("anthropic/claude-sonnet-4-5")).toBe("default_end");
    expect(defaultCacheControl("openrouter/anthropic/claude-opus-4.1")).toBe("default_end");
    expect(defaultCacheControl("openai/gpt-5")).toBeNull();
  });
});
