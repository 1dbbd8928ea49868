import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AnthropicServer } from "../helpers/anthropic-server.js";
import { ChatServer } from "../helpers/chat-server.js";
import { externalAccount } from "../helpers/cloud-auth.js";
import { isolatedSettings } from "../helpers/openai-server.js";
import {
  compareMessages,
  expectedRequests,
  expectedTrajectory,
  FIXTURE_KEY,
  type Json,
  providerCase,
  runProviderCase,
  withoutNulls,
} from "../helpers/provider-fixtures.js";
import { ResponsesServer } from "../helpers/responses-server.js";
import type { CapturedRequest } from "../helpers/scripted-server.js";
import { tempDir } from "../helpers/tmp.js";

const AWS = { accessKey: "AKIASWERUNTEST000001", secretKey: "swerun/test/secret/key/abcdef0123456789" };

/** A server standing in for one provider, the variables that point swerun at it, and how its path is written. */
interface Stand {
  requests: CapturedRequest[];
  pending: number;
  base: string;
  env: Record<string, string>;
  close(): Promise<void>;
  push(...answers: Array<{ body: unknown }>): unknown;
}

async function stand(protocol: string): Promise<Stand> {
  const key = FIXTURE_KEY;
  if (protocol === "responses") {
    const server = await ResponsesServer.start(key);
    return Object.assign(server, {
      base: server.url,
      env: { OPENAI_API_KEY: key, OPENAI_BASE_URL: server.url },
    });
  }
  if (protocol === "bedrock" || protocol === "vertex") {
    const subjectToken = "swerun-test-oidc-token";
    const server = await AnthropicServer.start({ aws: AWS, google: { subjectToken } });
    const dir = tempDir("swerun-vertex-adc-");
    writeFileSync(join(dir, "oidc-token"), subjectToken);
    const keyFile = join(dir, "adc.json");
    writeFileSync(keyFile, JSON.stringify(externalAccount(`${server.url}/token`, join(dir, "oidc-token"))));
    const env: Record<string, string> =
      protocol === "bedrock"
        ? {
            AWS_ACCESS_KEY_ID: AWS.accessKey,
            AWS_SECRET_ACCESS_KEY: AWS.secretKey,
            AWS_REGION_NAME: "us-east-1",
            AWS_BEDROCK_RUNTIME_ENDPOINT: server.url,
          }
        : {
            VERTEXAI_PROJECT: "swerun-fixture",
            VERTEXAI_LOCATION: "us-east5",
            GOOGLE_APPLICATION_CREDENTIALS: keyFile,
          };
    return Object.assign(server, { base: server.url, env });
  }
  const chat: Record<string, ConstructorParameters<typeof Object>[0]> = {
    azure: {
      path: /^\/openai\/deployments\/[^/]+\/chat\/completions$/,
      auth: { header: "api-key", value: key },
      query: ["api-version"],
      env: (url: string) => ({ AZURE_API_KEY: key, AZURE_API_BASE: url, AZURE_API_VERSION: "2024-10-21" }),
    },
    portkey: {
      path: /^\/v1\/chat\/completions$/,
      auth: { header: "x-portkey-api-key", value: key },
      env: (url: string) => ({ PORTKEY_API_KEY: key, PORTKEY_PROXY: `${url}/v1` }),
    },
    requesty: {
      path: /^\/v1\/chat\/completions$/,
      auth: { header: "authorization", value: `Bearer ${key}` },
      env: (url: string) => ({ REQUESTY_API_KEY: key, REQUESTY_API_BASE: `${url}/v1` }),
    },
  };
  const options = chat[protocol];
  const server = await ChatServer.start(options);
  return Object.assign(server, { base: server.url, env: options.env(server.url) });
}

/** What swerun records differently from litellm, deliberately (README, "Providers"). */
function listedDifferences(protocol: string, name = "") {
  return (message: Json): Json => {
    if (typeof message.extra?.cost === "number")
      message.extra.cost = Number(message.extra.cost.toPrecision(12));
    if (name === "responses-bridge") {
      // litellm's own replay record (item order and a checksum) and its creation time.
      for (const m of [message, message.extra?.response?.choices?.[0]?.message])
        delete m?.provider_specific_fields;
      if (message.extra?.response) message.extra.response.created = 0;
    } else if (protocol === "responses") {
      // swerun gives the response object and function_call_output items the role its readers use;
      // litellm wraps the response id in its own.
      if (message.object === "response" || message.type === "function_call_output") delete message.role;
      for (const response of [message.object === "response" ? message : undefined, message.extra?.response]) {
        if (!response) continue;
        response.id = "<id>";
        response.created_at = 0;
      }
    } else if (message.extra?.response) {
      // The raw chat completion as the provider sent it (litellm's own object has its fields).
      delete message.extra.response;
    }
    return withoutNulls(message);
  };
}

/**
 * What swerun sends differently from litellm, deliberately (README, "Providers"): on Vertex AI litellm finds no
 * output limit for `claude-sonnet-4-5@<version>` and asks for 128000 tokens, which Anthropic refuses for a
 * 64000-token model; swerun asks for the model's own limit.
 */
function sentDifferences(protocol: string, body: Json): Json {
  if (protocol === "vertex" && body.max_tokens === 128000) body.max_tokens = 64000;
  return withoutNulls(body);
}

const CASES = [
  "responses-codex",
  "responses-bridge",
  "azure-chat",
  "portkey-chat",
  "requesty-chat",
  "bedrock-claude",
  "vertex-claude",
];

describe("gateways, clouds and the Responses API, as litellm sends and records them (test/fixtures/providers)", () => {
  let server: Stand | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    vi.unstubAllEnvs();
  });

  for (const name of CASES) {
    it(`${name}: the same requests, and the same trajectory but for the listed differences`, async () => {
      const fixture = providerCase(name);
      server = await stand(fixture.protocol);
      vi.stubEnv("SWERUN_GLOBAL_CONFIG_DIR", isolatedSettings().dir);
      for (const [variable, value] of Object.entries(server.env)) vi.stubEnv(variable, value);
      server.push(...fixture.replies.map((body) => ({ body })));
      const { trajectory } = await runProviderCase(fixture, server.base);
      const expected = expectedRequests(name);
      const sent = server.requests.filter((r) => r.path !== "/token");
      expect(sent.map((r) => withoutNulls(r.body))).toEqual(
        expected.map((r) => sentDifferences(fixture.protocol, r.body)),
      );
      expect(sent.map((r) => [decodeURIComponent(r.path), r.query])).toEqual(
        expected.map((r) => [r.path, r.query]),
      );
      for (const [index, request] of expected.entries()) {
        for (const header of [
          "api-key",
          "x-portkey-api-key",
          "x-portkey-provider",
          "x-portkey-virtual-key",
        ]) {
          const want = request.headers[header]?.replace("<key>", FIXTURE_KEY);
          expect(sent[index]?.headers[header], header).toBe(want);
        }
      }
      const mini = expectedTrajectory(name);
      const pairs = compareMessages(mini, trajectory, listedDifferences(fixture.protocol, name));
      expect(pairs.actual).toEqual(pairs.expected);
      expect(trajectory.info.model_stats.instance_cost).toBeCloseTo(mini.info.model_stats.instance_cost, 12);
      expect(trajectory.info.exit_status).toBe(mini.info.exit_status);
      expect(trajectory.info.config.model_type).toBe(mini.info.config.model_type);
      expect(server.pending).toBe(0);
    });
  }
});

describe("mini-swe-agent's scripted Responses API model (DeterministicResponseAPIToolcallModel)", () => {
  it("records what mini-swe-agent records, but for the role swerun adds", async () => {
    vi.stubEnv("SWERUN_GLOBAL_CONFIG_DIR", isolatedSettings().dir);
    const fixture = providerCase("scripted-responses");
    const { trajectory } = await runProviderCase(fixture, "");
    const mini = expectedTrajectory("scripted-responses");
    const pairs = compareMessages(mini, trajectory, listedDifferences("responses"));
    expect(pairs.actual).toEqual(pairs.expected);
    expect(trajectory.info.model_stats).toEqual(mini.info.model_stats);
    expect(trajectory.info.config.model_type).toBe(mini.info.config.model_type);
    vi.unstubAllEnvs();
  });
});
