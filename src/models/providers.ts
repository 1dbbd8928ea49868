import { lookupSetting, type SettingsContext } from "../config/keys.js";
import { UserError } from "../errors.js";

/**
 * The API a provider speaks: OpenAI's chat completions (most), Anthropic's Messages API, Azure OpenAI's
 * deployment paths, or the Messages API of Claude on AWS Bedrock and Google Vertex AI.
 */
export type ProviderApi = "chat" | "anthropic" | "azure" | "bedrock" | "vertex";

/** One provider, named by its litellm prefix (`groq/llama-3.3-70b-versatile`). */
export interface ProviderInfo {
  api: ProviderApi;
  /** The base URL used when neither the config nor a variable gives one ("" where the region decides it). */
  baseURL: string;
  /** Variables that override the base URL, first found wins. */
  baseURLVars: readonly string[];
  /** Variables holding the API key, first found wins; the first is the one error messages ask for. */
  keyVars: readonly string[];
  /** Local servers run without a key; hosted APIs refuse to start without one. */
  keyRequired: boolean;
  /** The provider's id in @pydantic/genai-prices; none for local servers. */
  priceProvider?: string;
}

const hosted = (
  baseURL: string,
  keyVars: string[],
  priceProvider: string,
  baseURLVars: string[] = [],
  api: ProviderApi = "chat",
): ProviderInfo => ({
  api,
  baseURL,
  baseURLVars,
  keyVars,
  keyRequired: true,
  priceProvider,
});
const local = (baseURL: string, prefix: string): ProviderInfo => ({
  api: "chat",
  baseURL,
  baseURLVars: [`${prefix}_API_BASE`],
  keyVars: [`${prefix}_API_KEY`],
  keyRequired: false,
});

/** The providers swerun knows, by litellm prefix. A bare model name uses `openai`. */
export const PROVIDERS: Record<string, ProviderInfo> = {
  openai: hosted("https://api.openai.com/v1", ["OPENAI_API_KEY"], "openai", [
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
  ]),
  anthropic: hosted(
    "https://api.anthropic.com",
    ["ANTHROPIC_API_KEY"],
    "anthropic",
    ["ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL"],
    "anthropic",
  ),
  azure: hosted("", ["AZURE_API_KEY", "AZURE_OPENAI_API_KEY"], "azure", ["AZURE_API_BASE"], "azure"),
  bedrock: { ...hosted("", [], "aws", ["AWS_BEDROCK_RUNTIME_ENDPOINT"], "bedrock"), keyRequired: false },
  vertex_ai: { ...hosted("", [], "google", ["VERTEXAI_API_BASE"], "vertex"), keyRequired: false },
  // Priced as litellm prices Portkey's replies: by the model's name ("litellm": genai-prices infers the provider).
  portkey: hosted("https://api.portkey.ai/v1", ["PORTKEY_API_KEY"], "litellm", ["PORTKEY_PROXY"]),
  requesty: hosted("https://router.requesty.ai/v1", ["REQUESTY_API_KEY"], "", ["REQUESTY_API_BASE"]),
  openrouter: hosted("https://openrouter.ai/api/v1", ["OPENROUTER_API_KEY"], "openrouter", [
    "OPENROUTER_API_BASE",
  ]),
  together_ai: hosted(
    "https://api.together.xyz/v1",
    ["TOGETHER_API_KEY", "TOGETHERAI_API_KEY", "TOGETHER_AI_API_KEY"],
    "together",
  ),
  groq: hosted("https://api.groq.com/openai/v1", ["GROQ_API_KEY"], "groq"),
  deepseek: hosted("https://api.deepseek.com/v1", ["DEEPSEEK_API_KEY"], "deepseek"),
  fireworks_ai: hosted(
    "https://api.fireworks.ai/inference/v1",
    ["FIREWORKS_API_KEY", "FIREWORKS_AI_API_KEY"],
    "fireworks",
  ),
  gemini: hosted("https://generativelanguage.googleapis.com/v1beta/openai", ["GEMINI_API_KEY"], "google"),
  mistral: hosted("https://api.mistral.ai/v1", ["MISTRAL_API_KEY"], "mistral"),
  xai: hosted("https://api.x.ai/v1", ["XAI_API_KEY"], "x-ai"),
  litellm_proxy: local("http://localhost:4000/v1", "LITELLM_PROXY"),
  ollama: local("http://localhost:11434/v1", "OLLAMA"),
  hosted_vllm: local("http://localhost:8000/v1", "HOSTED_VLLM"),
  lm_studio: local("http://localhost:1234/v1", "LM_STUDIO"),
  llamafile: local("http://localhost:8080/v1", "LLAMAFILE"),
};

/** The gateway a model class sends everything to, with the whole model name: mini-swe-agent's gateway classes. */
export function gatewayOf(modelClass: string): "openrouter" | "portkey" | "requesty" | undefined {
  if (modelClass.startsWith("openrouter")) return "openrouter";
  if (modelClass.startsWith("portkey")) return "portkey";
  if (modelClass === "requesty") return "requesty";
  return undefined;
}

/** Where and how a model is called. */
export interface Endpoint {
  /** The provider prefix (a key of PROVIDERS). */
  provider: string;
  /** The model name sent to the endpoint (the user's name without the provider prefix). */
  model: string;
  baseURL: string;
  /** The base URL came from the config or a variable, not from the table. */
  customBaseURL: boolean;
  info: ProviderInfo;
}

/** The model name does not start with a known provider. */
export class UnknownProviderError extends UserError {
  constructor(modelName: string, prefix: string) {
    super(
      `model "${modelName}": unknown provider "${prefix}/" (known: ${Object.keys(PROVIDERS)
        .map((name) => `${name}/`)
        .join(", ")}); for any other OpenAI-compatible server use ` +
        `-m openai/${modelName} -c model.model_kwargs.api_base=http://host:port/v1`,
    );
    this.name = "UnknownProviderError";
  }
}

function stringKwarg(kwargs: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = kwargs[name];
    if (typeof value === "string" && value) return value;
  }
  return undefined;
}

/**
 * Ollama's litellm variable holds the server root (http://localhost:11434); its OpenAI API lives under /v1.
 * Anthropic's base URL is the server root, as litellm takes it, also when it ends in /v1/messages.
 */
function normalizeBase(provider: string, url: string): string {
  const trimmed = url.replace(/\/+$/, "");
  if (provider === "anthropic") return trimmed.replace(/\/v1\/messages$/, "");
  return provider === "ollama" && !trimmed.endsWith("/v1") ? `${trimmed}/v1` : trimmed;
}

/** litellm's route prefixes of Bedrock model names (`bedrock/invoke/<model id>`), not part of the model id. */
function bedrockModel(model: string): string {
  return model.replace(/^(invoke|converse)\//, "");
}

/**
 * Picks provider, model and base URL for a `provider/model` name. `model_kwargs.api_base` (or `base_url`)
 * overrides the base URL; `forceProvider` (mini-swe-agent's openrouter model class) sends the whole name there.
 */
export function resolveEndpoint(
  modelName: string,
  modelKwargs: Record<string, unknown>,
  options: { forceProvider?: string; settings?: SettingsContext } = {},
): Endpoint {
  let provider = options.forceProvider ?? "openai";
  let model = modelName;
  const slash = modelName.indexOf("/");
  if (!options.forceProvider && slash > 0) {
    const prefix = modelName.slice(0, slash);
    if (!(prefix in PROVIDERS)) throw new UnknownProviderError(modelName, prefix);
    provider = prefix;
    model = modelName.slice(slash + 1);
  }
  const info = PROVIDERS[provider];
  if (!info) throw new UnknownProviderError(modelName, provider);
  if (provider === "bedrock") model = bedrockModel(model);
  const configured = stringKwarg(
    modelKwargs,
    "api_base",
    "base_url",
    ...(provider === "bedrock" ? ["aws_bedrock_runtime_endpoint"] : []),
  );
  const fromVariable = configured ? undefined : lookupSetting(info.baseURLVars, options.settings)?.value;
  const custom = configured ?? fromVariable;
  return {
    provider,
    model,
    baseURL: normalizeBase(provider, custom ?? info.baseURL),
    customBaseURL: custom !== undefined,
    info,
  };
}
