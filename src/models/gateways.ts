import { lookupSetting, type SettingsContext } from "../config/keys.js";
import type { ModelConfig } from "../config/schema.js";
import { registerCredential } from "../util/secrets.js";
import { type GatewayCall, lookupKey, MissingApiKeyError } from "./model-setup.js";
import type { Endpoint } from "./providers.js";

/**
 * Portkey (mini-swe-agent's PortkeyModel): the key in `x-portkey-api-key`, then PORTKEY_VIRTUAL_KEY as
 * `x-portkey-virtual-key`, else the config's `provider` as `x-portkey-provider` (which also prices the model;
 * without it the model is priced by its name, as litellm prices Portkey's replies);
 * the base URL from PORTKEY_PROXY, as Portkey's SDK reads it.
 */
export function portkeyCall(
  config: ModelConfig,
  endpoint: Endpoint,
  settings?: SettingsContext,
): GatewayCall {
  const key = lookupKey(config, endpoint.info.keyVars, settings);
  if (!key && !endpoint.customBaseURL) throw new MissingApiKeyError(config.model_name, "PORTKEY_API_KEY");
  registerCredential(key?.value);
  const virtualKey = lookupSetting(["PORTKEY_VIRTUAL_KEY"], settings)?.value;
  registerCredential(virtualKey);
  const headers: Record<string, string | null> = { ...(key ? { "x-portkey-api-key": key.value } : {}) };
  if (virtualKey) headers["x-portkey-virtual-key"] = virtualKey;
  else if (config.provider) headers["x-portkey-provider"] = config.provider;
  const info = { ...endpoint.info, priceProvider: config.provider || endpoint.info.priceProvider };
  return { endpoint: { ...endpoint, info }, key: undefined, headers };
}

/** Requesty (mini-swe-agent's RequestyModel): the key as a bearer token, and the calling app's name. */
export function requestyCall(
  config: ModelConfig,
  endpoint: Endpoint,
  settings?: SettingsContext,
): GatewayCall {
  const key = lookupKey(config, endpoint.info.keyVars, settings);
  if (!key && !endpoint.customBaseURL) throw new MissingApiKeyError(config.model_name, "REQUESTY_API_KEY");
  return { endpoint, key, headers: { "X-Title": "swerun" } };
}
