import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { calcPrice } from "@pydantic/genai-prices";
import { describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import {
  loadPriceRegistry,
  normalizeUsage,
  type PricingOptions,
  registryCost,
  responseCost,
  UnknownPriceError,
} from "../../src/models/cost.js";

const pricing = (overrides: Partial<PricingOptions> = {}): PricingOptions => ({
  modelName: "openai/gpt-4o",
  provider: "openai",
  apiModel: "gpt-4o",
  priceProvider: "openai",
  registry: {},
  registryPath: null,
  costTracking: "default",
  ...overrides,
});

describe("normalizeUsage", () => {
  it("reads OpenAI, OpenRouter, Anthropic and DeepSeek cache counts", () => {
    expect(
      normalizeUsage({
        prompt_tokens: 1000,
        completion_tokens: 50,
        prompt_tokens_details: { cached_tokens: 800 },
      }),
    ).toEqual({ prompt_tokens: 1000, completion_tokens: 50, cache_read_tokens: 800, cache_write_tokens: 0 });
    expect(
      normalizeUsage({
        prompt_tokens: 1000,
        completion_tokens: 50,
        prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 700 },
      }),
    ).toMatchObject({ cache_read_tokens: 100, cache_write_tokens: 700 });
    expect(
      normalizeUsage({ prompt_tokens: 900, completion_tokens: 5, prompt_cache_hit_tokens: 600 }),
    ).toMatchObject({
      cache_read_tokens: 600,
    });
  });

  it("adds cache counts that a provider left out of the prompt count", () => {
    expect(
      normalizeUsage({
        input_tokens: 10,
        output_tokens: 5,
        cache_read_input_tokens: 300,
        cache_creation_input_tokens: 200,
      }),
    ).toEqual({ prompt_tokens: 510, completion_tokens: 5, cache_read_tokens: 300, cache_write_tokens: 200 });
  });

  it("is undefined without token counts", () => {
    expect(normalizeUsage(undefined)).toBeUndefined();
    expect(normalizeUsage({ total_tokens: 3 })).toBeUndefined();
  });
});

describe("registryCost", () => {
  it("prices uncached, cache-read, cache-write and completion tokens separately", () => {
    const price = {
      input_cost_per_token: 1e-6,
      output_cost_per_token: 2e-6,
      cache_read_input_token_cost: 1e-7,
      cache_creation_input_token_cost: 1.25e-6,
    };
    const usage = {
      prompt_tokens: 1000,
      completion_tokens: 100,
      cache_read_tokens: 600,
      cache_write_tokens: 200,
    };
    expect(registryCost(price, usage)).toBeCloseTo(200e-6 + 600e-7 + 200 * 1.25e-6 + 200e-6, 12);
    expect(registryCost({ input_cost_per_token: 1e-6, output_cost_per_token: 0 }, usage)).toBeCloseTo(
      1000e-6,
      12,
    );
  });
});

describe("loadPriceRegistry", () => {
  it("reads a LiteLLM-format file and rejects missing or malformed ones", () => {
    const dir = mkdtempSync(join(tmpdir(), "swerun-registry-"));
    const path = join(dir, "prices.json");
    writeFileSync(path, JSON.stringify({ "openai/x": { input_cost_per_token: 1 } }));
    expect(loadPriceRegistry(path)).toEqual({ "openai/x": { input_cost_per_token: 1 } });
    expect(loadPriceRegistry(null)).toEqual({});
    expect(() => loadPriceRegistry(join(dir, "missing.json"))).toThrow(
      /litellm_model_registry: no such file/,
    );
    writeFileSync(path, "{nope");
    expect(() => loadPriceRegistry(path)).toThrow(UserError);
  });
});

describe("responseCost", () => {
  const usage = {
    prompt_tokens: 1000,
    completion_tokens: 100,
    prompt_tokens_details: { cached_tokens: 200 },
  };

  it("uses @pydantic/genai-prices for known models", async () => {
    const expected = calcPrice(
      { input_tokens: 1000, output_tokens: 100, cache_read_tokens: 200, cache_write_tokens: 0 },
      "gpt-4o",
      { providerId: "openai" },
    )?.total_price;
    expect(expected).toBeGreaterThan(0);
    expect(await responseCost({ usage }, pricing())).toEqual({ cost: expected, source: "genai-prices" });
  });

  it("prefers the registry (full or bare name) over the price table", async () => {
    const registry = { "gpt-4o": { input_cost_per_token: 1e-3, output_cost_per_token: 0 } };
    expect(await responseCost({ usage }, pricing({ registry }))).toEqual({ cost: 1, source: "registry" });
  });

  it("prefers the provider's own usage.cost over everything", async () => {
    const registry = { "openai/gpt-4o": { input_cost_per_token: 1, output_cost_per_token: 1 } };
    const result = await responseCost({ usage: { ...usage, cost: 0.0123 } }, pricing({ registry }));
    expect(result).toEqual({ cost: 0.0123, source: "provider" });
  });

  it("explains how to register a price when none is known", async () => {
    const options = pricing({ modelName: "openai/test-model", apiModel: "test-model" });
    const attempt = responseCost({ usage }, options);
    await expect(attempt).rejects.toThrow(UnknownPriceError);
    await expect(attempt).rejects.toThrow(/no price known for model "openai\/test-model"/);
    await expect(attempt).rejects.toThrow(/litellm_model_registry/);
    await expect(attempt).rejects.toThrow(/LITELLM_MODEL_REGISTRY_PATH/);
    await expect(attempt).rejects.toThrow(/cost_tracking: ignore_errors/);
    await expect(attempt).rejects.toThrow(/SWERUN_COST_TRACKING=ignore_errors/);
  });

  it("does not price local servers from the table", async () => {
    const options = pricing({ modelName: "ollama/gpt-4o", provider: "ollama", priceProvider: undefined });
    await expect(responseCost({ usage }, options)).rejects.toThrow(UnknownPriceError);
  });

  it("records 0 with cost_tracking ignore_errors, also for a response without usage", async () => {
    const options = pricing({
      modelName: "openai/test-model",
      apiModel: "test-model",
      costTracking: "ignore_errors",
    });
    expect(await responseCost({ usage }, options)).toEqual({ cost: 0, source: "ignored" });
    expect(await responseCost({}, options)).toEqual({ cost: 0, source: "ignored" });
    await expect(responseCost({}, pricing())).rejects.toThrow(/reports no token usage/);
  });
});

describe("reasoning and thinking tokens, as litellm prices them", () => {
  it("prices Gemini's thoughts, reported apart from completion_tokens, as output tokens", async () => {
    // Gemini's OpenAI-compatible API: 60 thinking tokens in total_tokens and reasoning_tokens, not in completion_tokens.
    const usage = {
      prompt_tokens: 1000,
      completion_tokens: 40,
      total_tokens: 1100,
      completion_tokens_details: { reasoning_tokens: 60 },
    };
    expect(normalizeUsage(usage)).toEqual({
      prompt_tokens: 1000,
      completion_tokens: 100,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
    });
    const options = pricing({
      modelName: "gemini/gemini-2.5-pro",
      provider: "gemini",
      apiModel: "gemini-2.5-pro",
      priceProvider: "google",
    });
    const { cost } = await responseCost({ usage }, options);
    const expected = calcPrice({ input_tokens: 1000, output_tokens: 100 }, "gemini-2.5-pro", {
      providerId: "google",
    });
    expect(cost).toBeCloseTo(expected?.total_price ?? Number.NaN, 15);
    expect(cost).toBeCloseTo((1000 * 1.25 + 100 * 10) / 1e6, 15);
  });

  it("leaves OpenAI's reasoning tokens where they are (inside completion_tokens)", () => {
    const usage = {
      prompt_tokens: 1000,
      completion_tokens: 100,
      total_tokens: 1100,
      completion_tokens_details: { reasoning_tokens: 60 },
    };
    expect(normalizeUsage(usage)?.completion_tokens).toBe(100);
    const responses = {
      input_tokens: 1000,
      input_tokens_details: { cached_tokens: 800 },
      output_tokens: 100,
      output_tokens_details: { reasoning_tokens: 60 },
      total_tokens: 1100,
    };
    expect(normalizeUsage(responses)).toEqual({
      prompt_tokens: 1000,
      completion_tokens: 100,
      cache_read_tokens: 800,
      cache_write_tokens: 0,
    });
  });

  it("reads Gemini's own usageMetadata, thoughts as output and cached content as cache reads", () => {
    const usage = {
      promptTokenCount: 2000,
      candidatesTokenCount: 30,
      thoughtsTokenCount: 70,
      cachedContentTokenCount: 1500,
      totalTokenCount: 2100,
    };
    expect(normalizeUsage(usage)).toEqual({
      prompt_tokens: 2000,
      completion_tokens: 100,
      cache_read_tokens: 1500,
      cache_write_tokens: 0,
    });
  });

  it("prices Anthropic's cache writes and reads as genai-prices does (checked for every fixture in the parity tests)", async () => {
    const usage = {
      prompt_tokens: 121000,
      completion_tokens: 500,
      cache_creation_input_tokens: 20000,
      cache_read_input_tokens: 100000,
    };
    const options = pricing({
      modelName: "anthropic/claude-sonnet-4-5",
      provider: "anthropic",
      apiModel: "claude-sonnet-4-5",
      priceProvider: "anthropic",
    });
    const { cost } = await responseCost({ usage }, options);
    expect(cost).toBeCloseTo((1000 * 3 + 20000 * 3.75 + 100000 * 0.3 + 500 * 15) / 1e6, 15);
  });
});
