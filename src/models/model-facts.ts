import { MODEL_CLASSES, type ModelConfig } from "../config/schema.js";
import {
  type CalcPrice,
  genaiParts,
  type LitellmPrice,
  loadPriceRegistry,
  normalizeUsage,
  registryCost,
} from "./cost.js";
import { gatewayOf, resolveEndpoint } from "./providers.js";

/** A call's cost split into input and output, in dollars. */
export interface CostSplit {
  input_cost: number;
  output_cost: number;
}

/** What swerun knows about a model before calling it: its provider, price and context window. */
export interface ModelFacts {
  /** The model name as the user gave it. */
  name: string;
  /** The provider prefix (`openai`, `anthropic`, ...), or the model class of a stand-in (`deterministic`). */
  provider: string;
  /** Prompt tokens the model accepts, when the user's registry (`max_input_tokens`) or the price data knows. */
  contextWindow?: number;
  /** Output tokens per reply the model allows, when the user's registry knows (`max_output_tokens`, else `max_tokens`). */
  maxOutputTokens?: number;
  /** Why the model is not fully known (no price, no context window); undefined when it is, or when it is a stand-in. */
  lookupWarning?: string;
  /** Splits a call's raw `usage` into input and output cost at the known prices; undefined without prices. */
  splitCost?: (usage: unknown) => CostSplit | undefined;
}

function positive(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

function registrySplit(price: LitellmPrice) {
  return (raw: unknown): CostSplit | undefined => {
    const usage = normalizeUsage(raw);
    if (!usage) return undefined;
    const output_cost = usage.completion_tokens * (positive(price.output_cost_per_token) ?? 0);
    return { input_cost: registryCost(price, { ...usage, completion_tokens: 0 }), output_cost };
  };
}

function genaiSplit(calcPrice: CalcPrice, model: string, providerId: string) {
  return (raw: unknown): CostSplit | undefined => {
    const usage = normalizeUsage(raw);
    const price = usage && genaiParts(calcPrice, usage, model, providerId);
    return price ? { input_cost: price.input_price, output_cost: price.output_price } : undefined;
  };
}

/**
 * Looks up the model of `config` the way its calls will be priced: the user's LiteLLM registry first, then
 * @pydantic/genai-prices. Never throws: what cannot be resolved (an unknown provider, an unreadable registry)
 * is reported in `lookupWarning`, and the run itself reports it properly.
 */
export async function describeModel(config: ModelConfig): Promise<ModelFacts> {
  const kind = MODEL_CLASSES[config.model_class];
  const name = config.model_name || (kind === "deterministic" ? "deterministic" : "");
  if (kind !== "openai" && kind !== "openai_textbased" && kind !== "responses")
    return { name, provider: kind };
  let endpoint: ReturnType<typeof resolveEndpoint>;
  let registry: Record<
    string,
    LitellmPrice & { max_input_tokens?: unknown; max_output_tokens?: unknown; max_tokens?: unknown }
  >;
  try {
    endpoint = resolveEndpoint(name, config.model_kwargs, { forceProvider: gatewayOf(config.model_class) });
    registry = loadPriceRegistry(config.litellm_model_registry);
  } catch (error) {
    return { name, provider: name.split("/")[0] ?? "", lookupWarning: (error as Error).message };
  }
  const candidates = [...new Set([name, `${endpoint.provider}/${endpoint.model}`, endpoint.model])];
  const key = candidates.find((candidate) => Object.hasOwn(registry, candidate));
  const entry = key === undefined ? undefined : registry[key];
  let contextWindow = positive(entry?.max_input_tokens);
  const maxOutputTokens = positive(entry?.max_output_tokens) ?? positive(entry?.max_tokens);
  let splitCost = entry ? registrySplit(entry) : undefined;
  const priceProvider =
    (gatewayOf(config.model_class) === "portkey" ? config.provider : undefined) ||
    endpoint.info.priceProvider;
  if (priceProvider && (!entry || contextWindow === undefined)) {
    const { calcPrice } = await import("@pydantic/genai-prices");
    let info: { context_window?: number } | undefined;
    try {
      info = calcPrice({ input_tokens: 0, output_tokens: 0 }, endpoint.model, {
        providerId: priceProvider,
      })?.model;
    } catch {
      info = undefined;
    }
    if (info) {
      contextWindow ??= positive(info.context_window);
      splitCost ??= genaiSplit(calcPrice, endpoint.model, priceProvider);
    }
  }
  const missing = [splitCost ? "" : "price", contextWindow === undefined ? "context window" : ""];
  const lacking = missing.filter(Boolean).join(" or ");
  const looked = config.litellm_model_registry
    ? `the registry ${config.litellm_model_registry}${priceProvider ? " and @pydantic/genai-prices" : ""}`
    : priceProvider
      ? "@pydantic/genai-prices"
      : "no registry (model.litellm_model_registry)";
  return {
    name,
    provider: endpoint.provider,
    ...(contextWindow === undefined ? {} : { contextWindow }),
    ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
    ...(splitCost ? { splitCost } : {}),
    ...(lacking ? { lookupWarning: `no ${lacking} known for model "${name}" (looked in ${looked})` } : {}),
  };
}
