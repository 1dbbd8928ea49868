import { describe, expect, it } from "vitest";
import type { ModelFacts } from "../../src/models/model-facts.js";
import { percent, SwarmUsage } from "../../src/run/swarm-usage.js";

const facts: ModelFacts = { name: "m", provider: "p", contextWindow: 1000 };

describe("SwarmUsage", () => {
  it("writes percentages as SwarmSDK does: two places, a whole number with one", () => {
    expect(percent(623, 10000)).toBe("6.23%");
    expect(percent(825, 1000)).toBe("82.5%");
    expect(percent(600, 1000)).toBe("60.0%");
    expect(percent(1, 3)).toBe("33.33%");
  });

  it("reports the last call and the context the conversation fills: the last prompt and every output", () => {
    const usage = new SwarmUsage();
    expect(usage.usage(facts)).toBeUndefined();
    usage.callEnd({ prompt_tokens: 400, completion_tokens: 20 }, 0.5);
    usage.callEnd({ prompt_tokens: 500, completion_tokens: 30 }, 0.25);
    expect(usage.usage(facts)).toEqual({
      input_tokens: 500,
      output_tokens: 30,
      total_tokens: 530,
      total_cost: 0.25,
      cumulative_input_tokens: 500,
      cumulative_output_tokens: 50,
      cumulative_total_tokens: 550,
      context_limit: 1000,
      tokens_used_percentage: "55.0%",
      tokens_remaining: 450,
    });
    expect([usage.cost, usage.tokens]).toEqual([0.75, 950]);
    // Without a context window: no context keys, and no warnings.
    expect(usage.usage({ name: "m", provider: "p" })).not.toHaveProperty("context_limit");
    expect(usage.contextWarnings({ name: "m", provider: "p" })).toEqual([]);
  });

  it("warns once for each threshold crossed, several at once when a call crosses them", () => {
    const usage = new SwarmUsage();
    usage.callEnd({ prompt_tokens: 590, completion_tokens: 5 }, 0);
    expect(usage.contextWarnings(facts)).toEqual([]);
    usage.callEnd({ prompt_tokens: 900, completion_tokens: 10 }, 0);
    const warnings = usage.contextWarnings(facts);
    expect(warnings.map((w) => w.threshold)).toEqual(["60%", "80%", "90%"]);
    expect(warnings[2]).toMatchObject({ current_usage: "91.5%", tokens_used: 915, tokens_remaining: 85 });
    expect(usage.contextWarnings(facts)).toEqual([]);
    usage.callEnd({ prompt_tokens: 950, completion_tokens: 10 }, 0);
    expect(usage.contextWarnings(facts).map((w) => w.threshold)).toEqual(["95%"]);
  });
});
