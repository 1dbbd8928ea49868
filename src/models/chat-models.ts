import type { SettingsContext } from "../config/keys.js";
import type { ModelConfig } from "../config/schema.js";
import type { AgentEvent } from "../events.js";
import type { ChatModel } from "./chat-model.js";
import { configuredModelName } from "./openai.js";
import { resolveEndpoint } from "./providers.js";

/** What choosing a chat model needs besides its config. */
export interface ChatModelContext {
  emit?: (event: AgentEvent) => void;
  textBased: boolean;
  settings?: SettingsContext;
}

/**
 * The model of a litellm-style config (`litellm`, `litellm_textbased`, `openrouter`, ... classes), by the API
 * its provider speaks: Anthropic's Messages API for `anthropic/`, OpenAI's chat completions for the others.
 */
export async function chatModel(config: ModelConfig, context: ChatModelContext): Promise<ChatModel> {
  const modelName = configuredModelName(config, context.settings);
  const gateway = config.model_class.startsWith("openrouter") ? "openrouter" : undefined;
  const endpoint = resolveEndpoint(modelName, config.model_kwargs, {
    forceProvider: gateway,
    settings: context.settings,
  });
  switch (endpoint.info.api) {
    case "anthropic": {
      const { AnthropicModel } = await import("./anthropic.js");
      return AnthropicModel.create(config, context);
    }
    default: {
      const { OpenAIModel } = await import("./openai.js");
      return OpenAIModel.create(config, { ...context, endpoint });
    }
  }
}
