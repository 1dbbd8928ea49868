import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Message } from "../../src/messages.js";
import { PromptCache } from "../helpers/anthropic-cache.js";
import { AnthropicServer } from "../helpers/anthropic-server.js";
import { isolatedSettings } from "../helpers/openai-server.js";
import {
  FIXTURE_KEY,
  PROVIDER_FIXTURES,
  providerCase,
  runProviderCase,
} from "../helpers/provider-fixtures.js";

describe("a 60-step SWE-bench-shaped run on Claude, against a server that caches prompts as Anthropic does", () => {
  let server: AnthropicServer;
  beforeEach(async () => {
    server = await AnthropicServer.start({ apiKey: FIXTURE_KEY });
    vi.stubEnv("SWERUN_GLOBAL_CONFIG_DIR", isolatedSettings().dir);
    vi.stubEnv("ANTHROPIC_API_KEY", FIXTURE_KEY);
    vi.stubEnv("ANTHROPIC_API_BASE", server.url);
  });
  afterEach(async () => {
    await server.close();
    vi.unstubAllEnvs();
  });

  it("reads and writes the cache call for call as mini-swe-agent + litellm do, and costs what they cost", async () => {
    const fixture = providerCase("anthropic-swebench-60");
    const mini = JSON.parse(
      readFileSync(join(PROVIDER_FIXTURES, "expected", "anthropic-swebench-60.costs.json"), "utf8"),
    );
    const cache = new PromptCache();
    server.push(
      ...fixture.replies.map((reply) => ({
        body: (request: unknown) => {
          const { output_tokens, ...message } = reply as { output_tokens: number };
          return { ...message, usage: cache.usage(request, output_tokens) };
        },
      })),
    );
    const { trajectory } = await runProviderCase(fixture, server.url);
    const calls = (trajectory.messages as Message[])
      .filter((m) => m.role === "assistant")
      .map((m) => {
        const extra = m.extra as { response: { usage: Record<string, number> }; cost: number };
        const usage = extra.response.usage;
        return {
          prompt_tokens: usage.prompt_tokens,
          cache_creation_input_tokens: usage.cache_creation_input_tokens,
          cache_read_input_tokens: usage.cache_read_input_tokens,
          completion_tokens: usage.completion_tokens,
          cost: Number(extra.cost.toPrecision(12)),
        };
      });
    expect(calls).toEqual(
      mini.calls.map((call: { cost: number }) => ({ ...call, cost: Number(call.cost.toPrecision(12)) })),
    );
    expect(trajectory.info.exit_status).toBe("Submitted");
    expect(trajectory.info.model_stats.instance_cost / mini.instance_cost).toBeCloseTo(1, 12);
    // Every call after the first reads the whole earlier conversation back from the cache.
    for (const [i, call] of calls.entries())
      if (i > 0) expect(call.cache_read_input_tokens).toBe(calls[i - 1]?.prompt_tokens);
  });
});
