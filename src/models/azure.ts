import { lookupSetting, type SettingsContext } from "../config/keys.js";
import type { ModelConfig } from "../config/schema.js";
import { UserError } from "../errors.js";
import { registerCredential } from "../util/secrets.js";
import { type GatewayCall, lookupKey, MissingApiKeyError } from "./model-setup.js";
import type { Endpoint } from "./providers.js";

/** The API version litellm asks Azure OpenAI for when neither the config nor AZURE_API_VERSION gives one. */
export const AZURE_DEFAULT_API_VERSION = "2025-02-01-preview";

/**
 * Azure OpenAI (`azure/<deployment>`), as litellm calls it: `<AZURE_API_BASE>/openai/deployments/<deployment>/
 * chat/completions?api-version=<AZURE_API_VERSION>`, the key (AZURE_API_KEY or AZURE_OPENAI_API_KEY) in the
 * `api-key` header. `model_kwargs.api_base` and `api_version` win over the variables.
 */
export function azureCall(config: ModelConfig, endpoint: Endpoint, settings?: SettingsContext): GatewayCall {
  if (!endpoint.customBaseURL) {
    throw new UserError(
      `model "${config.model_name}" needs its Azure OpenAI endpoint: set AZURE_API_BASE (https://<resource>.openai.azure.com) or model.model_kwargs.api_base`,
    );
  }
  const key = lookupKey(config, endpoint.info.keyVars, settings);
  if (!key) throw new MissingApiKeyError(config.model_name, "AZURE_API_KEY");
  registerCredential(key.value);
  const configured = config.model_kwargs.api_version;
  const version =
    (typeof configured === "string" && configured) ||
    lookupSetting(["AZURE_API_VERSION"], settings)?.value ||
    AZURE_DEFAULT_API_VERSION;
  const baseURL = `${endpoint.baseURL.replace(/\/openai$/, "")}/openai/deployments/${encodeURIComponent(endpoint.model)}`;
  return {
    endpoint: { ...endpoint, baseURL },
    key: undefined,
    headers: { "api-key": key.value },
    query: { "api-version": version },
  };
}
