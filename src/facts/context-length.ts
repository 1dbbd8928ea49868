import { modelSchema } from "../config/model.js";
import { describeModel } from "../models/model-facts.js";
import type { RunFacts } from "./run-facts.js";

/**
 * The context window of the model a run used (swival's `settings.context_length`), as its description knows
 * it: the user's LiteLLM registry (`max_input_tokens`), else @pydantic/genai-prices. Null for a model neither
 * knows, for scripted models, and for trajectories that do not record their model config. Looked up once per
 * model (name, class, endpoint, registry) in `cache`.
 */
export async function contextLengthOf(
  facts: RunFacts,
  cache: Map<string, Promise<number | null>> = new Map(),
): Promise<number | null> {
  const recorded = facts.model_config;
  if (!recorded) return null;
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
    );
    found = parsed.success
      ? describeModel(parsed.data).then((model) => model.contextWindow ?? null)
      : Promise.resolve(null);
    cache.set(key, found);
  }
  return found;
}
