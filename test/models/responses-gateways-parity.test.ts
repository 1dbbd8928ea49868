import { afterEach, describe, expect, it, vi } from "vitest";
import { isolatedSettings } from "../helpers/openai-server.js";
import {
  compareMessages,
  expectedRequests,
  expectedTrajectory,
  FIXTURE_KEY,
  type Json,
  moreCase,
  runProviderCase,
  withoutNulls,
} from "../helpers/provider-fixtures.js";
import { ResponsesServer } from "../helpers/responses-server.js";

/** Each gateway's Responses path, the header its key goes in, and the variables that point swerun at it. */
const GATEWAYS: Record<
  string,
  { path: string; authHeader: string; env: (url: string) => Record<string, string> }
> = {
  "openrouter-responses": {
    path: "/api/v1/responses",
    authHeader: "authorization",
    env: (url) => ({ OPENROUTER_API_KEY: FIXTURE_KEY, OPENROUTER_API_BASE: url }),
  },
  "portkey-responses": {
    path: "/v1/responses",
    authHeader: "x-portkey-api-key",
    env: (url) => ({ PORTKEY_API_KEY: FIXTURE_KEY, PORTKEY_PROXY: url }),
  },
};

/** What swerun records differently from mini-swe-agent, deliberately (README, "Providers"). */
function recordedDifferences(message: Json): Json {
  if (typeof message.extra?.cost === "number")
    message.extra.cost = Number(message.extra.cost.toPrecision(12));
  // swerun gives the response object and function_call_output items the role its readers use.
  if (message.object === "response" || message.type === "function_call_output") delete message.role;
  // The generator writes creation times as 0 (a placeholder, not a difference).
  for (const response of [message.object === "response" ? message : undefined, message.extra?.response])
    if (response) response.created_at = 0;
  return withoutNulls(message);
}

describe("the Responses API through OpenRouter and Portkey, as mini-swe-agent sends and records it", () => {
  let server: ResponsesServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    vi.unstubAllEnvs();
  });

  for (const name of Object.keys(GATEWAYS)) {
    it(`${name}: the same requests and headers, the same trajectory but for the listed differences`, async () => {
      const gateway = GATEWAYS[name] as (typeof GATEWAYS)[string];
      const fixture = moreCase(name);
      server = await ResponsesServer.start(FIXTURE_KEY, gateway);
      vi.stubEnv("SWERUN_GLOBAL_CONFIG_DIR", isolatedSettings().dir);
      for (const [variable, value] of Object.entries(gateway.env(server.url))) vi.stubEnv(variable, value);
      server.push(...fixture.replies.map((body) => ({ body })));
      const { trajectory } = await runProviderCase(fixture, server.url);
      const expected = expectedRequests(name);
      expect(server.requests.map((r) => withoutNulls(r.body))).toEqual(
        expected.map((r) => withoutNulls(r.body)),
      );
      expect(server.requests.map((r) => [r.path, r.query])).toEqual(expected.map((r) => [r.path, r.query]));
      for (const [index, request] of expected.entries()) {
        const want = request.headers[gateway.authHeader]?.replace("<key>", FIXTURE_KEY);
        expect(server.requests[index]?.headers[gateway.authHeader]).toBe(want);
      }
      const mini = expectedTrajectory(name);
      const pairs = compareMessages(mini, trajectory, recordedDifferences);
      expect(pairs.actual).toEqual(pairs.expected);
      expect(trajectory.info.model_stats.instance_cost).toBeCloseTo(mini.info.model_stats.instance_cost, 12);
      expect(trajectory.info.model_stats.api_calls).toBe(mini.info.model_stats.api_calls);
      expect(trajectory.info.exit_status).toBe(mini.info.exit_status);
      expect(trajectory.info.config.model_type).toBe(mini.info.config.model_type);
      expect(server.pending).toBe(0);
    });
  }
});
