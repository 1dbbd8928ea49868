import { lookupSetting } from "../config/keys.js";
import { registerSecret } from "../util/secrets.js";
import { PROVIDERS } from "./providers.js";

/**
 * Registers the API keys this machine would use (every provider's key variables, in the environment,
 * `.env` or the global config, and `HF_TOKEN`), so reports built from files written elsewhere (e.g. by
 * mini-swe-agent, which does not redact) do not repeat them.
 */
export function registerKnownKeys(): void {
  for (const info of Object.values(PROVIDERS)) {
    for (const name of info.keyVars) registerSecret(lookupSetting([name])?.value);
  }
  registerSecret(lookupSetting(["HF_TOKEN"])?.value);
}
