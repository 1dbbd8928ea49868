import { calcPrice } from "@pydantic/genai-prices";
import { describe, expect, it, vi } from "vitest";
import { LimitsExceeded } from "../../src/errors.js";
import type { Message } from "../../src/messages.js";
import { UnknownPriceError } from "../../src/models/cost.js";
import { completion, TEST_KEY, testModel, toolCall, useOpenAIServer } from "../helpers/openai-server.js";

const server = useOpenAIServer({ SWERUN_GLOBAL_COST_LIMIT: "", SWERUN_GLOBAL_CALL_LIMIT: "" });

const conversation: Message[] = [
  { role: "system", content: "sys" },
  { role: "user", content: "task" },
];
const reply = (usage: Record<string, unknown>) => ({
  body: completion({ toolCalls: [toolCall("call_1", { command: "ls" })], usage }),
});

describe("cost of a call", () => {
  it("prices prompt, completion, cache-read and cache-write tokens from the registry", async () => {
    server.push(
      reply({
        prompt_tokens: 1000,
        completion_tokens: 100,
        prompt_tokens_details: { cached_tokens: 600, cache_write_tokens: 200 },
      }),
    );
    const { model } = await testModel(server);
    const message = await model.query(conversation);
    expect(message.extra?.cost).toBeCloseTo(200 * 1e-6 + 600 * 1e-7 + 200 * 1.25e-6 + 100 * 2e-6, 12);
  });

  it("prices known models from @pydantic/genai-prices", async () => {
    server.push(
      reply({ prompt_tokens: 2000, completion_tokens: 300, prompt_tokens_details: { cached_tokens: 1000 } }),
    );
    const { model } = await testModel(server, { model_name: "openai/gpt-4o", litellm_model_registry: null });
    const message = await model.query(conversation);
    const expected = calcPrice(
      { input_tokens: 2000, output_tokens: 300, cache_read_tokens: 1000, cache_write_tokens: 0 },
      "gpt-4o",
      { providerId: "openai" },
    )?.total_price;
    expect(expected).toBeGreaterThan(0);
    expect(message.extra?.cost).toBe(expected);
    expect(server.requests[0]?.body.model).toBe("gpt-4o");
  });

  it("takes OpenRouter's usage.cost, and asks OpenRouter to include it", async () => {
    server.push(reply({ prompt_tokens: 10, completion_tokens: 5, cost: 0.0421 }));
    const { model } = await testModel(
      server,
      { model_name: "openrouter/openai/gpt-4o" },
      { env: { OPENROUTER_API_KEY: TEST_KEY } },
    );
    const message = await model.query(conversation);
    expect(message.extra?.cost).toBe(0.0421);
    expect(server.requests[0]?.body).toMatchObject({ model: "openai/gpt-4o", usage: { include: true } });
  });

  it("refuses a model without a price before any request, with how to fix it", async () => {
    server.push(reply({ prompt_tokens: 10, completion_tokens: 5 }));
    const attempt = testModel(server, { model_name: "openai/unpriced-model" });
    await expect(attempt).rejects.toThrow(UnknownPriceError);
    await expect(attempt).rejects.toThrow(
      /no price known for model "openai\/unpriced-model".*cost_tracking: ignore_errors/,
    );
    expect(server.requests).toHaveLength(0);
  });

  it("is an error for a response without usage to price", async () => {
    server.push({
      body: { ...completion({ toolCalls: [toolCall("call_1", { command: "ls" })] }), usage: null },
    });
    const { model } = await testModel(server);
    await expect(model.query(conversation)).rejects.toThrow(/reports no token usage/);
  });

  it("is 0 for an unknown price with cost_tracking: ignore_errors", async () => {
    server.push(reply({ prompt_tokens: 10, completion_tokens: 5 }));
    const { model } = await testModel(server, {
      model_name: "openai/unpriced-model",
      cost_tracking: "ignore_errors",
    });
    const message = await model.query(conversation);
    expect(message.extra?.cost).toBe(0);
    expect(message.extra?.actions).toHaveLength(1);
  });
});

describe("Anthropic prompt caching", () => {
  it("marks the last message for Claude models and prices the cached tokens", async () => {
    const usage = {
      prompt_tokens: 5000,
      completion_tokens: 100,
      prompt_tokens_details: { cached_tokens: 4000 },
    };
    server.push(reply(usage));
    const { model } = await testModel(
      server,
      { model_name: "anthropic/claude-sonnet-4-5", litellm_model_registry: null },
      { env: { ANTHROPIC_API_KEY: TEST_KEY } },
    );
    expect(model.serialize().model.set_cache_control).toBe("default_end");
    const history: Message[] = [
      ...conversation,
      { role: "assistant", content: null, tool_calls: [toolCall("call_0", { command: "pwd" })] },
      { role: "tool", tool_call_id: "call_0", content: "/repo" },
    ];
    const message = await model.query(history);
    expect(server.requests[0]?.body.messages).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "task" },
      { role: "assistant", content: null, tool_calls: [toolCall("call_0", { command: "pwd" })] },
      { role: "tool", tool_call_id: "call_0", content: "/repo", cache_control: { type: "ephemeral" } },
    ]);
    const expected = calcPrice(
      { input_tokens: 5000, output_tokens: 100, cache_read_tokens: 4000, cache_write_tokens: 0 },
      "claude-sonnet-4-5",
      { providerId: "anthropic" },
    )?.total_price;
    expect(message.extra?.cost).toBe(expected);
  });

  it("mini-swe-agent's openrouter class sends the whole name to OpenRouter; set_cache_control: null turns caching off", async () => {
    server.push(reply({ prompt_tokens: 10, completion_tokens: 5, cost: 0.001 }));
    const { model } = await testModel(
      server,
      { model_name: "anthropic/claude-sonnet-4.5", model_class: "openrouter", set_cache_control: null },
      { env: { OPENROUTER_API_KEY: TEST_KEY } },
    );
    await model.query(conversation);
    expect(server.requests[0]?.body.model).toBe("anthropic/claude-sonnet-4.5");
    expect(server.requests[0]?.body.messages).toEqual([
      { role: "system", content: "sys" },
      { role: "user", content: "task" },
    ]);
  });
});

describe("global limits", () => {
  it("stops every model of the process before the call that would pass SWERUN_GLOBAL_CALL_LIMIT", async () => {
    vi.stubEnv("SWERUN_GLOBAL_CALL_LIMIT", "2");
    server.push(
      reply({ prompt_tokens: 10, completion_tokens: 5 }),
      reply({ prompt_tokens: 10, completion_tokens: 5 }),
    );
    const { model: first } = await testModel(server);
    const { model: second } = await testModel(server);
    await first.query(conversation);
    await second.query(conversation);
    const error = await first.query(conversation).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LimitsExceeded);
    const [exit] = (error as LimitsExceeded).messages;
    expect(exit).toMatchObject({ role: "exit", extra: { exit_status: "LimitsExceeded" } });
    expect(exit?.content).toBe(
      "Global cost/call limit exceeded: 2 calls made of 2 (all runs of this process)",
    );
    expect(server.requests).toHaveLength(2);
  });

  it("stops once the total cost reaches MSWEA_GLOBAL_COST_LIMIT", async () => {
    vi.stubEnv("MSWEA_GLOBAL_COST_LIMIT", "0.001");
    server.push(reply({ prompt_tokens: 1000, completion_tokens: 20 }));
    const { model } = await testModel(server);
    await model.query(conversation);
    await expect(model.query(conversation)).rejects.toThrow(
      /Global cost\/call limit exceeded: \$0\.0010 spent of \$0\.0010/,
    );
    expect(server.requests).toHaveLength(1);
  });
});
