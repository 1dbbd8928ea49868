import { englishMessages } from "../config/common.js";
import { modelSchema } from "../config/model.js";
import { describeModel, type ModelFacts } from "../models/model-facts.js";
import type { RunFacts } from "./run-facts.js";

/** What a run's model description knows of its limits (null: not known). */
export interface ModelLimits {
  /** The context window (swival's `settings.context_length`). */
  contextLength: number | null;
  /** Output tokens per reply (swival's `settings.max_output_tokens` when the config sets none). */
  maxOutputTokens: number | null;
}

const NO_LIMITS: ModelLimits = { contextLength: null, maxOutputTokens: null };

/**
 * The limits of the model a run used, as its description knows them: the user's LiteLLM registry
 * (`max_input_tokens`, `max_output_tokens`), else @pydantic/genai-prices (context windows only). Nothing is
 * known for scripted models and for trajectories that do not record their model config. Looked up once per
 * model (name, class, endpoint, registry) in `cache`.
 */
export async function modelLimitsOf(
  facts: RunFacts,
  cache: Map<string, Promise<ModelLimits>> = new Map(),
): Promise<ModelLimits> {
  const recorded = facts.model_config;
  if (!recorded) return NO_LIMITS;
  const wanted = {
    model_name: recorded.model_name,
    model_class: recorded.model_class,
    model_kwargs: recorded.model_kwargs,
    litellm_model_registry: recorded.litellm_model_registry,
  };
  const key = JSON.stringify([
    wanted.model_name,
    wanted.model_class,
    wanted.litellm_model_registry,
    facts.model_kwargs?.api_base,
  ]);
  let found = cache.get(key);
  if (!found) {
    const parsed = modelSchema.safeParse(
      Object.fromEntries(Object.entries(wanted).filter(([, value]) => value !== undefined && value !== null)),
      { error: englishMessages() },
    );
    found = parsed.success ? describeModel(parsed.data).then(limitsOf) : Promise.resolve(NO_LIMITS);
    cache.set(key, found);
  }
  return found;
}

function limitsOf(model: ModelFacts): ModelLimits {
  return { contextLength: model.contextWindow ?? null, maxOutputTokens: model.maxOutputTokens ?? null };
}
