import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AnthropicServer } from "../helpers/anthropic-server.js";
import { isolatedSettings } from "../helpers/openai-server.js";
import {
  compareMessages,
  expectedRequests,
  expectedTrajectory,
  FIXTURE_KEY,
  type Json,
  PROVIDER_CASES,
  runProviderCase,
  withoutNulls,
} from "../helpers/provider-fixtures.js";

/**
 * What swerun records differently from litellm, deliberately (README, "Providers"): litellm's own response id
 * and creation time, and its estimate of the reasoning tokens (it counts the thinking text with a tokenizer;
 * swerun reports Anthropic's own count when it gives one, else none), and the last digit of a cost.
 */
function listedDifferences(message: Json): Json {
  // Costs are compared to 12 significant digits: genai-prices adds the parts in another order than litellm.
  if (typeof message.extra?.cost === "number")
    message.extra.cost = Number(message.extra.cost.toPrecision(12));
  const response = message.extra?.response;
  if (response) {
    response.id = "chatcmpl-<id>";
    response.created = 0;
    delete response.usage.completion_tokens_details;
  }
  return withoutNulls(message);
}

describe("anthropic/ models through the Messages API, as litellm sends and records them (test/fixtures/providers)", () => {
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

  // The long accounting run (anthropic-swebench-60) is compared call for call in anthropic-cost.test.ts.
  for (const fixture of PROVIDER_CASES.filter((c) => c.protocol === "anthropic" && !c.accounting)) {
    it(`${fixture.name}: the same requests, and the same trajectory but for the listed differences`, async () => {
      server.push(...fixture.replies.map((body) => ({ body })));
      const { trajectory } = await runProviderCase(fixture, server.url);
      const expected = expectedRequests(fixture.name);
      expect(server.requests.map((r) => r.body)).toEqual(expected.map((r) => r.body));
      for (const request of server.requests) {
        expect(request.path).toBe("/v1/messages");
        expect(request.headers["anthropic-version"]).toBe("2023-06-01");
        expect(request.headers["x-api-key"]).toBe(FIXTURE_KEY);
      }
      const mini = expectedTrajectory(fixture.name);
      const pairs = compareMessages(mini, trajectory, listedDifferences);
      expect(pairs.actual).toEqual(pairs.expected);
      expect(trajectory.info.model_stats.api_calls).toBe(mini.info.model_stats.api_calls);
      expect(trajectory.info.model_stats.instance_cost).toBeCloseTo(mini.info.model_stats.instance_cost, 12);
      expect(trajectory.info.exit_status).toBe(mini.info.exit_status);
      expect(trajectory.info.config.model_type).toBe(mini.info.config.model_type);
      expect(server.pending).toBe(0);
    });
  }
});
