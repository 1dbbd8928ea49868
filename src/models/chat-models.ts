import type { SettingsContext } from "../config/keys.js";
import type { ModelConfig } from "../config/schema.js";
import type { AgentEvent } from "../events.js";
import { azureCall } from "./azure.js";
import type { ChatModel } from "./chat-model.js";
import { portkeyCall, requestyCall } from "./gateways.js";
import { configuredModelName, type GatewayCall, providerCall, resolvedConfig } from "./model-setup.js";
import { gatewayOf, resolveEndpoint } from "./providers.js";
import type { ResponsesModel } from "./responses.js";

/** What choosing a model needs besides its config. */
export interface ChatModelContext {
  emit?: (event: AgentEvent) => void;
  textBased: boolean;
  settings?: SettingsContext;
}

/** The endpoint, key and headers of a config's model: its gateway's (by model class), else its provider's. */
function callOf(config: ModelConfig, modelName: string, settings?: SettingsContext): GatewayCall {
  const gateway = gatewayOf(config.model_class);
  const endpoint = resolveEndpoint(modelName, config.model_kwargs, { forceProvider: gateway, settings });
  if (gateway === "portkey") return portkeyCall(config, endpoint, settings);
  if (gateway === "requesty") return requestyCall(config, endpoint, settings);
  if (endpoint.info.api === "azure") return azureCall(config, endpoint, settings);
  return providerCall(config, modelName, settings);
}

/**
 * The model of a litellm-style config (`litellm`, `litellm_textbased`, `openrouter`, `portkey`, ... classes),
 * by the API its provider speaks: Anthropic's Messages API for `anthropic/` (and Claude on `bedrock/` and
 * `vertex_ai/`), OpenAI's chat completions for the others (Azure's deployment paths for `azure/`).
 */
export async function chatModel(config: ModelConfig, context: ChatModelContext): Promise<ChatModel> {
  const modelName = configuredModelName(config, context.settings);
  const gateway = gatewayOf(config.model_class);
  const api = gateway
    ? "chat"
    : resolveEndpoint(modelName, config.model_kwargs, { settings: context.settings }).info.api;
  switch (api) {
    case "anthropic": {
      const { AnthropicModel } = await import("./anthropic.js");
      return AnthropicModel.create(config, context);
    }
    case "bedrock": {
      const { bedrockModel } = await import("./bedrock.js");
      return bedrockModel(config, context);
    }
    case "vertex": {
      const { vertexModel } = await import("./vertex.js");
      return vertexModel(config, context);
    }
    default: {
      const call = callOf(config, modelName, context.settings);
      const { OpenAIModel, openAIClient } = await import("./openai.js");
      const { isResponsesOnly, ResponsesBridgeModel } = await import("./responses-bridge.js");
      if (call.endpoint.provider !== "openai" || !isResponsesOnly(call.endpoint.model))
        return OpenAIModel.create(config, { ...context, call });
      // gpt-5-codex and the like answer only on the Responses API: litellm bridges them there, so does swerun.
      const resolved = resolvedConfig(config, modelName);
      const { publicConfig } = await import("./chat-model.js");
      return new ResponsesBridgeModel(
        resolved,
        openAIClient(resolved, call.endpoint, call.key, { headers: call.headers }),
        {
          endpoint: call.endpoint,
          textBased: context.textBased,
          emit: context.emit,
          keySource: call.key?.source,
          publicConfig: publicConfig(resolved),
        },
      );
    }
  }
}

/** A Responses API model (mini-swe-agent's litellm_response, openrouter_response, portkey_response classes). */
export async function responsesModel(
  config: ModelConfig,
  context: { emit?: (event: AgentEvent) => void; settings?: SettingsContext },
): Promise<ResponsesModel> {
  const modelName = configuredModelName(config, context.settings);
  const call = callOf(config, modelName, context.settings);
  const { ResponsesModel } = await import("./responses.js");
  return new ResponsesModel(resolvedConfig(config, modelName), call.endpoint, call.key, {
    emit: context.emit,
    client: { headers: call.headers, ...(call.query ? { query: call.query } : {}) },
  });
}
