import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { modelSchema } from "../../src/config/model.js";
import { createModel } from "../../src/models/index.js";
import { ChatServer } from "../helpers/chat-server.js";
import { isolatedSettings } from "../helpers/openai-server.js";
import {
  compareMessages,
  expectedRequests,
  expectedTrajectory,
  FIXTURE_KEY,
  type Json,
  moreCase,
  PROVIDER_FIXTURES,
  runProviderCase,
  withoutNulls,
} from "../helpers/provider-fixtures.js";

const TOKEN = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.swerun-fixture-azure-ad-token";
const AZURE_PATH = /^\/openai\/deployments\/[^/]+\/chat\/completions$/;

/** What swerun records differently from litellm, deliberately (README, "Providers"). */
function recordedDifferences(message: Json): Json {
  if (typeof message.extra?.cost === "number")
    message.extra.cost = Number(message.extra.cost.toPrecision(12));
  delete message.extra?.response; // litellm's own response object; swerun keeps the provider's
  return withoutNulls(message);
}

describe("Azure OpenAI with a Microsoft Entra ID (Azure AD) token, as litellm sends it", () => {
  let server: ChatServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    vi.unstubAllEnvs();
  });

  async function run(name: string, env: Record<string, string>) {
    const fixture = moreCase(name);
    server = await ChatServer.start({
      path: AZURE_PATH,
      auth: { header: "authorization", value: `Bearer ${TOKEN}` },
      query: ["api-version"],
    });
    vi.stubEnv("SWERUN_GLOBAL_CONFIG_DIR", isolatedSettings().dir);
    for (const [variable, value] of Object.entries({ AZURE_API_BASE: server.url, ...env }))
      vi.stubEnv(variable, value);
    server.push(...fixture.replies.map((body) => ({ body })));
    const result = await runProviderCase(fixture, server.url);
    const expected = expectedRequests(name);
    expect(server.requests.map((r) => withoutNulls(r.body))).toEqual(
      expected.map((r) => withoutNulls(r.body)),
    );
    expect(server.requests.map((r) => [r.path, r.query])).toEqual(expected.map((r) => [r.path, r.query]));
    for (const request of server.requests) expect(request.headers["api-key"]).toBeUndefined();
    const mini = expectedTrajectory(name);
    const pairs = compareMessages(mini, result.trajectory, recordedDifferences);
    expect(pairs.actual).toEqual(pairs.expected);
    expect(result.trajectory.info.model_stats.instance_cost).toBeCloseTo(
      mini.info.model_stats.instance_cost,
      12,
    );
    expect(JSON.stringify(result.trajectory)).not.toContain(TOKEN);
    expect(server.pending).toBe(0);
    return result.trajectory;
  }

  for (const variable of ["AZURE_AD_TOKEN", "AZURE_OPENAI_AD_TOKEN"]) {
    it(`a token in ${variable}: the bearer token, no api-key, the same requests and trajectory`, async () => {
      await run("azure-ad-token-env", { [variable]: TOKEN, AZURE_API_VERSION: "2024-10-21" });
    });
  }

  it("a token in model_kwargs.azure_ad_token: sent as a bearer token, never recorded (litellm records it)", async () => {
    const trajectory = await run("azure-ad-token-kwargs", {});
    const mini = expectedTrajectory("azure-ad-token-kwargs");
    expect(mini.info.config.model.model_kwargs.azure_ad_token).toBe(TOKEN);
    expect(trajectory.info.config.model.model_kwargs).toEqual({ api_version: "2024-06-01" });
  });

  it("litellm 1.110.2 itself refuses AZURE_AD_TOKEN alone (the fixture records its error)", () => {
    const probe = JSON.parse(
      readFileSync(join(PROVIDER_FIXTURES, "expected", "azure-ad-token-litellm-env.json"), "utf8"),
    );
    expect(probe).toEqual({ error: expect.stringMatching(/Missing credentials/), requests: 0 });
  });

  it("no key and no token: one line naming both, before any call", async () => {
    vi.stubEnv("SWERUN_GLOBAL_CONFIG_DIR", isolatedSettings().dir);
    for (const name of ["AZURE_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_AD_TOKEN", "AZURE_OPENAI_AD_TOKEN"])
      vi.stubEnv(name, "");
    vi.stubEnv("AZURE_API_BASE", "http://127.0.0.1:9");
    const config = modelSchema.parse({ model_name: "azure/dep", cost_tracking: "ignore_errors" });
    await expect(createModel(config)).rejects.toThrow(
      /^model "azure\/dep" needs an API key: set AZURE_API_KEY \(or an Entra ID token in AZURE_AD_TOKEN\)[^\n]*$/,
    );
    const oidc = modelSchema.parse({
      model_name: "azure/dep",
      cost_tracking: "ignore_errors",
      model_kwargs: { azure_ad_token: "oidc/x" },
    });
    await expect(createModel(oidc)).rejects.toThrow(/oidc.*not supported/);
  });

  it("an API key wins over a token in the environment, as under litellm", async () => {
    server = await ChatServer.start({
      path: AZURE_PATH,
      auth: { header: "api-key", value: FIXTURE_KEY },
      query: ["api-version"],
    });
    vi.stubEnv("SWERUN_GLOBAL_CONFIG_DIR", isolatedSettings().dir);
    for (const [name, value] of Object.entries({
      AZURE_API_BASE: server.url,
      AZURE_API_KEY: FIXTURE_KEY,
      AZURE_AD_TOKEN: TOKEN,
    }))
      vi.stubEnv(name, value);
    const fixture = moreCase("azure-ad-token-env");
    server.push(...fixture.replies.map((body) => ({ body })));
    await runProviderCase(fixture, server.url);
    expect(server.requests.map((r) => r.headers.authorization)).toEqual([undefined, undefined]);
  });
});
