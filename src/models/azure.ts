import { lookupSetting, type SettingsContext } from "../config/keys.js";
import type { ModelConfig } from "../config/schema.js";
import { UserError } from "../errors.js";
import { registerCredential } from "../util/secrets.js";
import { type GatewayCall, lookupKey, MissingApiKeyError } from "./model-setup.js";
import type { Endpoint } from "./providers.js";

/** The API version litellm asks Azure OpenAI for when neither the config nor AZURE_API_VERSION gives one. */
export const AZURE_DEFAULT_API_VERSION = "2025-02-01-preview";

/** Variables holding a Microsoft Entra ID (Azure AD) access token: litellm's, then the OpenAI SDK's. */
const AD_TOKEN_VARS = ["AZURE_AD_TOKEN", "AZURE_OPENAI_AD_TOKEN"];

/**
 * How a call to Azure OpenAI is authorized: `model_kwargs.azure_ad_token` (an Entra ID access token, sent as a
 * bearer token), else an API key (`model_kwargs.api_key`, AZURE_API_KEY, AZURE_OPENAI_API_KEY; the `api-key`
 * header), else a token from AZURE_AD_TOKEN or AZURE_OPENAI_AD_TOKEN. None of them: a UserError before any call.
 */
function azureAuth(
  config: ModelConfig,
  endpoint: Endpoint,
  settings?: SettingsContext,
): { token: { value: string; source: string } | undefined; headers: Record<string, string> } {
  const configured = config.model_kwargs.azure_ad_token;
  const key = lookupKey(config, endpoint.info.keyVars, settings);
  const token =
    typeof configured === "string" && configured
      ? { value: configured, source: "model.model_kwargs.azure_ad_token" }
      : key
        ? undefined
        : lookupSetting(AD_TOKEN_VARS, settings);
  if (token?.value.startsWith("oidc/")) {
    throw new UserError(
      `${token.source}: litellm's "oidc/..." token exchange is not supported; give the Entra ID access token itself`,
    );
  }
  if (token) return { token: { value: token.value, source: token.source }, headers: {} };
  if (!key) {
    throw new MissingApiKeyError(config.model_name, "AZURE_API_KEY (or an Entra ID token in AZURE_AD_TOKEN)");
  }
  return { token: undefined, headers: { "api-key": key.value } };
}

/**
 * Azure OpenAI (`azure/<deployment>`), as litellm calls it: `<AZURE_API_BASE>/openai/deployments/<deployment>/
 * chat/completions?api-version=<AZURE_API_VERSION>`, with an API key in the `api-key` header or an Entra ID
 * token as a bearer token (see azureAuth). `model_kwargs.api_base` and `api_version` win over the variables.
 */
export function azureCall(config: ModelConfig, endpoint: Endpoint, settings?: SettingsContext): GatewayCall {
  if (!endpoint.customBaseURL) {
    throw new UserError(
      `model "${config.model_name}" needs its Azure OpenAI endpoint: set AZURE_API_BASE (https://<resource>.openai.azure.com) or model.model_kwargs.api_base`,
    );
  }
  const auth = azureAuth(config, endpoint, settings);
  registerCredential(auth.token?.value);
  registerCredential(auth.headers["api-key"]);
  const configured = config.model_kwargs.api_version;
  const version =
    (typeof configured === "string" && configured) ||
    lookupSetting(["AZURE_API_VERSION"], settings)?.value ||
    AZURE_DEFAULT_API_VERSION;
  const baseURL = `${endpoint.baseURL.replace(/\/openai$/, "")}/openai/deployments/${encodeURIComponent(endpoint.model)}`;
  return {
    endpoint: { ...endpoint, baseURL },
    key: auth.token,
    headers: auth.headers,
    query: { "api-version": version },
  };
}
