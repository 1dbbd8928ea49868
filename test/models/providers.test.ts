import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { UserError } from "../../src/errors.js";
import { PROVIDERS, resolveEndpoint, UnknownProviderError } from "../../src/models/providers.js";

const empty = mkdtempSync(join(tmpdir(), "swerun-providers-"));
const settings = (env: Record<string, string> = {}) => ({
  env: { SWERUN_GLOBAL_CONFIG_DIR: empty, ...env },
  cwd: empty,
});

describe("resolveEndpoint", () => {
  it("maps each provider prefix to its base URL and strips the prefix", () => {
    const cases: Array<[string, string, string]> = [
      ["openai/gpt-4o", "gpt-4o", "https://api.openai.com/v1"],
      ["anthropic/claude-sonnet-4-5", "claude-sonnet-4-5", "https://api.anthropic.com"],
      [
        "openrouter/anthropic/claude-sonnet-4.5",
        "anthropic/claude-sonnet-4.5",
        "https://openrouter.ai/api/v1",
      ],
      ["together_ai/meta-llama/Llama-3.3-70B", "meta-llama/Llama-3.3-70B", "https://api.together.xyz/v1"],
      ["groq/llama-3.3-70b-versatile", "llama-3.3-70b-versatile", "https://api.groq.com/openai/v1"],
      ["deepseek/deepseek-chat", "deepseek-chat", "https://api.deepseek.com/v1"],
      [
        "fireworks_ai/accounts/fireworks/models/x",
        "accounts/fireworks/models/x",
        "https://api.fireworks.ai/inference/v1",
      ],
      ["ollama/qwen3:8b", "qwen3:8b", "http://localhost:11434/v1"],
      ["hosted_vllm/Qwen/Qwen3-8B", "Qwen/Qwen3-8B", "http://localhost:8000/v1"],
      ["lm_studio/qwen3", "qwen3", "http://localhost:1234/v1"],
    ];
    for (const [name, model, baseURL] of cases) {
      const endpoint = resolveEndpoint(name, {}, { settings: settings() });
      expect({ model: endpoint.model, baseURL: endpoint.baseURL, custom: endpoint.customBaseURL }).toEqual({
        model,
        baseURL,
        custom: false,
      });
    }
  });

  it("sends a bare name to OpenAI, or to OPENAI_BASE_URL", () => {
    expect(resolveEndpoint("gpt-4o", {}, { settings: settings() })).toMatchObject({
      provider: "openai",
      model: "gpt-4o",
      baseURL: "https://api.openai.com/v1",
    });
    const custom = resolveEndpoint(
      "gpt-4o",
      {},
      { settings: settings({ OPENAI_BASE_URL: "http://proxy:4000/v1/" }) },
    );
    expect(custom).toMatchObject({ baseURL: "http://proxy:4000/v1", customBaseURL: true });
  });

  it("lets model_kwargs.api_base or base_url override the base URL", () => {
    const env = settings({ OPENAI_BASE_URL: "http://ignored/v1" });
    expect(
      resolveEndpoint("openai/m", { api_base: "http://127.0.0.1:9/v1" }, { settings: env }).baseURL,
    ).toBe("http://127.0.0.1:9/v1");
    expect(resolveEndpoint("groq/m", { base_url: "http://127.0.0.1:9/v1" }, { settings: env }).baseURL).toBe(
      "http://127.0.0.1:9/v1",
    );
  });

  it("reads local servers' base URLs from litellm's variables (Ollama's without /v1)", () => {
    const env = settings({ OLLAMA_API_BASE: "http://gpu:11434", HOSTED_VLLM_API_BASE: "http://gpu:8000/v1" });
    expect(resolveEndpoint("ollama/qwen3", {}, { settings: env }).baseURL).toBe("http://gpu:11434/v1");
    expect(resolveEndpoint("hosted_vllm/qwen3", {}, { settings: env }).baseURL).toBe("http://gpu:8000/v1");
  });

  it("sends the whole name to OpenRouter for mini-swe-agent's openrouter model class", () => {
    const endpoint = resolveEndpoint(
      "anthropic/claude-sonnet-4.5",
      {},
      { forceProvider: "openrouter", settings: settings() },
    );
    expect(endpoint).toMatchObject({ provider: "openrouter", model: "anthropic/claude-sonnet-4.5" });
  });

  it("rejects an unknown prefix with the known ones and the custom base URL recipe", () => {
    const attempt = () => resolveEndpoint("mistralai/Mistral-7B", {}, { settings: settings() });
    expect(attempt).toThrow(UnknownProviderError);
    expect(attempt).toThrow(UserError);
    try {
      attempt();
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toContain('unknown provider "mistralai/"');
      for (const prefix of Object.keys(PROVIDERS)) expect(message).toContain(`${prefix}/`);
      expect(message).toContain("-m openai/mistralai/Mistral-7B -c model.model_kwargs.api_base=");
      expect(message).not.toContain("\n");
    }
  });

  it("names each key variable, local servers needing none", () => {
    expect(PROVIDERS.openai?.keyVars[0]).toBe("OPENAI_API_KEY");
    expect(PROVIDERS.anthropic?.keyVars[0]).toBe("ANTHROPIC_API_KEY");
    expect(PROVIDERS.ollama?.keyRequired).toBe(false);
    expect(PROVIDERS.groq?.keyRequired).toBe(true);
  });
});

describe("resolveEndpoint for the clouds", () => {
  it("strips litellm's route prefixes from Bedrock model ids and reads the runtime endpoint", () => {
    const env = settings({ AWS_BEDROCK_RUNTIME_ENDPOINT: "http://127.0.0.1:9" });
    expect(
      resolveEndpoint("bedrock/invoke/us.anthropic.claude-sonnet-4-5-20250929-v1:0", {}, { settings: env }),
    ).toMatchObject({
      provider: "bedrock",
      model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
      baseURL: "http://127.0.0.1:9",
      customBaseURL: true,
    });
    expect(
      resolveEndpoint(
        "bedrock/anthropic.claude-x",
        { aws_bedrock_runtime_endpoint: "http://h:1" },
        { settings: env },
      ).baseURL,
    ).toBe("http://h:1");
  });

  it("names Azure's, Vertex's and Bedrock's APIs", () => {
    const env = settings({ AZURE_API_BASE: "https://r.openai.azure.com/" });
    expect(resolveEndpoint("azure/dep", {}, { settings: env })).toMatchObject({
      provider: "azure",
      model: "dep",
      baseURL: "https://r.openai.azure.com",
      info: { api: "azure" },
    });
    expect(
      resolveEndpoint("vertex_ai/claude-sonnet-4-5@20250929", {}, { settings: settings() }).info.api,
    ).toBe("vertex");
    expect(
      resolveEndpoint("anthropic/claude-x", { api_base: "http://h:1/v1/messages" }, { settings: settings() })
        .baseURL,
    ).toBe("http://h:1");
  });
});
