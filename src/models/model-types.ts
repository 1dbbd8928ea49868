import type { MODEL_CLASSES } from "../config/schema.js";

/**
 * `info.config.model_type` of each `model_class` a config can name, as the classes' `serialize()` write it:
 * the class path mini-swe-agent writes for the same config (its default, LitellmModel, for `openai`), so
 * readers of its trajectories see what they expect. The human stand-in has no mini-swe-agent class.
 */
export const MODEL_TYPES = {
  openai: "minisweagent.models.litellm_model.LitellmModel",
  openai_textbased: "minisweagent.models.litellm_textbased_model.LitellmTextbasedModel",
  litellm: "minisweagent.models.litellm_model.LitellmModel",
  litellm_textbased: "minisweagent.models.litellm_textbased_model.LitellmTextbasedModel",
  openrouter: "minisweagent.models.openrouter_model.OpenRouterModel",
  openrouter_textbased: "minisweagent.models.openrouter_textbased_model.OpenRouterTextbasedModel",
  portkey: "minisweagent.models.portkey_model.PortkeyModel",
  requesty: "minisweagent.models.requesty_model.RequestyModel",
  responses: "minisweagent.models.litellm_response_model.LitellmResponseModel",
  litellm_response: "minisweagent.models.litellm_response_model.LitellmResponseModel",
  openrouter_response: "minisweagent.models.openrouter_response_model.OpenRouterResponseModel",
  portkey_response: "minisweagent.models.portkey_response_model.PortkeyResponseAPIModel",
  deterministic: "minisweagent.models.test_models.DeterministicModel",
  deterministic_toolcall: "minisweagent.models.test_models.DeterministicToolcallModel",
  deterministic_response_api_toolcall:
    "minisweagent.models.test_models.DeterministicResponseAPIToolcallModel",
  roulette: "minisweagent.models.extra.roulette.RouletteModel",
  interleaving: "minisweagent.models.extra.roulette.InterleavingModel",
  human: "swerun.models.human.HumanModel",
} as const satisfies Record<keyof typeof MODEL_CLASSES | "human", string>;
