import { describe, expect, it } from "vitest";
import { modelSchema } from "../../src/config/model.js";
import { geminiContents, geminiRequestFields } from "../../src/models/gemini-request.js";

const config = (model_kwargs: Record<string, unknown>) =>
  modelSchema.parse({ model_name: "vertex_ai/gemini-2.5-pro", model_kwargs });

describe("Gemini requests as litellm shapes them", () => {
  it("maps OpenAI-style settings into generationConfig, thinking as a budget (2.5) or a level (3)", () => {
    expect(
      geminiRequestFields(config({ temperature: 0.2, max_tokens: 100, stop: "END" }), "gemini-2.5-pro"),
    ).toEqual({
      temperature: 0.2,
      maxOutputTokens: 100,
      stopSequences: ["END"],
    });
    expect(geminiRequestFields(config({ reasoning_effort: "high" }), "gemini-2.5-pro")).toEqual({
      thinkingConfig: { thinkingBudget: 4096, includeThoughts: true },
    });
    expect(geminiRequestFields(config({ reasoning_effort: "low" }), "gemini-3-pro-preview")).toEqual({
      thinkingConfig: { thinkingLevel: "low", includeThoughts: true },
    });
    expect(
      geminiRequestFields(config({ thinking: { type: "enabled", budget_tokens: 900 } }), "gemini-2.5-flash"),
    ).toEqual({ thinkingConfig: { thinkingBudget: 900, includeThoughts: true } });
    expect(
      geminiRequestFields(config({ api_base: "http://x", parallel_tool_calls: true }), "gemini-2.5-pro"),
    ).toEqual({});
  });

  it("a setting Gemini has no field for stops the run before any call, unless drop_params drops it", () => {
    expect(() => geminiRequestFields(config({ logit_bias: {} }), "gemini-2.5-pro")).toThrow(
      /^model\.model_kwargs\.logit_bias: not a setting Gemini on Vertex AI takes/,
    );
    expect(geminiRequestFields(config({ logit_bias: {}, drop_params: true }), "gemini-2.5-pro")).toEqual({});
    expect(() => geminiRequestFields(config({ reasoning_effort: "extreme" }), "gemini-2.5-pro")).toThrow(
      /reasoning_effort: "extreme" is not one of/,
    );
  });

  it("merges consecutive user messages into one turn, tool results into another", () => {
    const { contents, systemInstruction } = geminiContents([
      { role: "system", content: "sys" },
      { role: "user", content: "a" },
      { role: "user", content: [{ type: "text", text: "b" }] },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_1", function: { name: "bash", arguments: '{"command": "ls"}' } }],
      },
      { role: "tool", tool_call_id: "call_1", content: "out" },
      { role: "user", content: "c" },
    ]);
    expect(systemInstruction).toEqual({ parts: [{ text: "sys" }] });
    expect(contents).toEqual([
      { role: "user", parts: [{ text: "a" }, { text: "b" }] },
      { role: "model", parts: [{ functionCall: { name: "bash", args: { command: "ls" } } }] },
      { role: "user", parts: [{ functionResponse: { name: "bash", response: { content: "out" } } }] },
      { role: "user", parts: [{ text: "c" }] },
    ]);
  });
});
