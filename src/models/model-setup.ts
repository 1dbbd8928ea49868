import { lookupSetting, type SettingsContext } from "../config/keys.js";
import type { ModelConfig } from "../config/schema.js";
import { UserError } from "../errors.js";
import { type CacheControlMode, defaultCacheControl } from "./cache-control.js";
import { type Endpoint, resolveEndpoint } from "./providers.js";

/** How a model's endpoint is called: its endpoint (with the model's price provider), key and own headers. */
export interface GatewayCall {
  endpoint: Endpoint;
  /** The key sent as a bearer token, if the endpoint takes it that way. */
  key: { value: string; source: string } | undefined;
  headers: Record<string, string | null>;
  /** Query parameters of every request (Azure's `api-version`). */
  query?: Record<string, string>;
}

/** A hosted provider was chosen but no API key was found. */
export class MissingApiKeyError extends UserError {
  constructor(modelName: string, keyVar: string) {
    super(
      `model "${modelName}" needs an API key: set ${keyVar} in the environment, in .env in the current ` +
        `directory, or with \`swerun config set ${keyVar} <key>\``,
    );
    this.name = "MissingApiKeyError";
  }
}

/** The model name a config asks for: its own, else SWERUN_MODEL_NAME / MSWEA_MODEL_NAME. */
export function configuredModelName(config: ModelConfig, settings?: SettingsContext): string {
  const name = config.model_name || lookupSetting(["SWERUN_MODEL_NAME", "MSWEA_MODEL_NAME"], settings)?.value;
  if (!name) {
    throw new UserError(
      "no model name: pass -m provider/model (e.g. -m openai/gpt-5-mini) or set model.model_name",
    );
  }
  return name;
}

/** The config with its model name and cache-control default resolved (as mini-swe-agent's get_model does). */
export function resolvedConfig(config: ModelConfig, modelName: string): ModelConfig {
  const setCache: CacheControlMode | null =
    config.set_cache_control === undefined ? defaultCacheControl(modelName) : config.set_cache_control;
  return { ...config, model_name: modelName, set_cache_control: setCache };
}

/** The key a model uses: `model_kwargs.api_key`, else the first of the provider's variables that is set. */
export function lookupKey(
  config: ModelConfig,
  keyVars: readonly string[],
  settings?: SettingsContext,
): { value: string; source: string } | undefined {
  const configured = config.model_kwargs.api_key;
  return typeof configured === "string" && configured
    ? { value: configured, source: "model.model_kwargs.api_key" }
    : lookupSetting(keyVars, settings);
}

/**
 * The endpoint and key of a provider prefix (OpenRouter for mini-swe-agent's openrouter classes). A hosted
 * provider without a key is an error unless the base URL is custom (a proxy may not want one).
 */
export function providerCall(
  config: ModelConfig,
  modelName: string,
  settings?: SettingsContext,
): GatewayCall {
  const forceProvider = config.model_class.startsWith("openrouter") ? "openrouter" : undefined;
  const endpoint = resolveEndpoint(modelName, config.model_kwargs, { forceProvider, settings });
  const key = lookupKey(config, endpoint.info.keyVars, settings);
  if (!key && endpoint.info.keyRequired && !endpoint.customBaseURL) {
    throw new MissingApiKeyError(modelName, endpoint.info.keyVars[0] ?? "the API key");
  }
  return { endpoint, key, headers: {} };
}
