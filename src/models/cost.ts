import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { UserError } from "../errors.js";

/** Token counts of one call. `prompt_tokens` includes the cache-read and cache-write tokens. */
export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}

/** One model's entry in LiteLLM's `model_prices_and_context_window.json` (the keys swerun reads). */
export interface LitellmPrice {
  input_cost_per_token?: number;
  output_cost_per_token?: number;
  cache_read_input_token_cost?: number;
  cache_creation_input_token_cost?: number;
}

export type PriceRegistry = Record<string, LitellmPrice>;

/** No price is known for the model, or the response has no usage to price. */
export class UnknownPriceError extends UserError {
  constructor(message: string) {
    super(message);
    this.name = "UnknownPriceError";
  }
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

function object(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}

/**
 * Reads the token counts of a response's `usage` in the shapes providers use: OpenAI
 * (`prompt_tokens_details.cached_tokens`; the Responses API's `input_tokens_details.cached_tokens`), OpenRouter (`cache_write_tokens`), Anthropic/LiteLLM
 * (`cache_read_input_tokens`, `cache_creation_input_tokens`), DeepSeek (`prompt_cache_hit_tokens`).
 * When the cache counts exceed the prompt count, the provider reported uncached input only and they are added.
 * Reasoning tokens reported outside the completion count (Gemini's thoughts) are added to it; Gemini's own
 * `usageMetadata` is read too.
 */
export function normalizeUsage(raw: unknown): TokenUsage | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const usage = object(raw);
  if ("promptTokenCount" in usage || "candidatesTokenCount" in usage) return geminiUsage(usage);
  // Chat completions report cached tokens in `prompt_tokens_details`, the Responses API in `input_tokens_details`.
  const details = object(usage.prompt_tokens_details ?? usage.input_tokens_details);
  let prompt = count(usage.prompt_tokens) ?? count(usage.input_tokens);
  let completion = count(usage.completion_tokens) ?? count(usage.output_tokens);
  if (prompt === undefined && completion === undefined) return undefined;
  const cacheRead =
    count(details.cached_tokens) ??
    count(usage.cache_read_input_tokens) ??
    count(usage.prompt_cache_hit_tokens) ??
    0;
  const cacheWrite = count(details.cache_write_tokens) ?? count(usage.cache_creation_input_tokens) ?? 0;
  prompt ??= 0;
  completion ??= 0;
  if (cacheRead + cacheWrite > prompt) prompt += cacheRead + cacheWrite;
  // Gemini's OpenAI-compatible API reports its thinking apart: `reasoning_tokens` outside `completion_tokens`,
  // inside `total_tokens`. They are output tokens (litellm prices Gemini's thoughts as output).
  const reasoning = count(
    object(usage.completion_tokens_details ?? usage.output_tokens_details).reasoning_tokens,
  );
  const total = count(usage.total_tokens);
  if (
    reasoning &&
    total !== undefined &&
    total !== prompt + completion &&
    total === prompt + completion + reasoning
  )
    completion += reasoning;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    cache_read_tokens: cacheRead,
    cache_write_tokens: cacheWrite,
  };
}

/** Gemini's own `usageMetadata`: thoughts are output tokens besides the candidates', cached content is read. */
function geminiUsage(usage: Record<string, unknown>): TokenUsage {
  return {
    prompt_tokens: count(usage.promptTokenCount) ?? 0,
    completion_tokens: (count(usage.candidatesTokenCount) ?? 0) + (count(usage.thoughtsTokenCount) ?? 0),
    cache_read_tokens: count(usage.cachedContentTokenCount) ?? 0,
    cache_write_tokens: 0,
  };
}

/** Reads a LiteLLM-format price file; `null` means no registry. A path that does not exist is an error. */
export function loadPriceRegistry(path: string | null): PriceRegistry {
  if (!path) return {};
  const file = resolve(path);
  if (!existsSync(file)) {
    throw new UserError(`model.litellm_model_registry: no such file: ${file}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new UserError(`model.litellm_model_registry: ${file}: not valid JSON: ${(error as Error).message}`);
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new UserError(`model.litellm_model_registry: ${file}: expected an object of model names to prices`);
  }
  return data as PriceRegistry;
}

/** Cost of `usage` at LiteLLM-format prices; cache tokens without their own price cost the input price. */
export function registryCost(price: LitellmPrice, usage: TokenUsage): number {
  const input = count(price.input_cost_per_token) ?? 0;
  const output = count(price.output_cost_per_token) ?? 0;
  const cacheRead = count(price.cache_read_input_token_cost) ?? input;
  const cacheWrite = count(price.cache_creation_input_token_cost) ?? input;
  const uncached = Math.max(0, usage.prompt_tokens - usage.cache_read_tokens - usage.cache_write_tokens);
  return (
    uncached * input +
    usage.cache_read_tokens * cacheRead +
    usage.cache_write_tokens * cacheWrite +
    usage.completion_tokens * output
  );
}

export type CalcPrice = typeof import("@pydantic/genai-prices").calcPrice;
let calcPriceModule: Promise<CalcPrice> | undefined;

/** The maintained price table, loaded on first use (it is large). */
function loadCalcPrice(): Promise<CalcPrice> {
  calcPriceModule ??= import("@pydantic/genai-prices").then((module) => module.calcPrice);
  return calcPriceModule;
}

/** How one model's calls are priced. */
export interface PricingOptions {
  /** The name the user gave (`openai/gpt-4o`). */
  modelName: string;
  /** The provider prefix and the name sent to the endpoint (`openai`, `gpt-4o`). */
  provider: string;
  apiModel: string;
  /** The provider's id in @pydantic/genai-prices; none for local servers. */
  priceProvider: string | undefined;
  registry: PriceRegistry;
  /** For the error message. */
  registryPath: string | null;
  costTracking: "default" | "ignore_errors";
}

/** How a model's calls are priced: its names, its provider's price id, the user's registry, `cost_tracking`. */
export function pricingOf(
  config: {
    model_name: string;
    litellm_model_registry: string | null;
    cost_tracking: PricingOptions["costTracking"];
  },
  endpoint: { provider: string; model: string; info: { priceProvider?: string | undefined } },
): PricingOptions {
  const registryPath = config.litellm_model_registry;
  return {
    modelName: config.model_name,
    provider: endpoint.provider,
    apiModel: endpoint.model,
    priceProvider: endpoint.info.priceProvider,
    registry: loadPriceRegistry(registryPath),
    registryPath,
    costTracking: config.cost_tracking,
  };
}

/** Where a call's cost came from. */
export type CostSource = "provider" | "registry" | "genai-prices" | "ignored";

/** The user's registry entry of the model, under its full name or the name sent. */
function registryEntry(options: PricingOptions): LitellmPrice | undefined {
  const candidates = [
    ...new Set([options.modelName, `${options.provider}/${options.apiModel}`, options.apiModel]),
  ];
  const key = candidates.find((name) => Object.hasOwn(options.registry, name));
  return key === undefined ? undefined : options.registry[key];
}

/** "no price known for model ..." and where swerun looked. */
function noPrice(options: PricingOptions): string {
  const looked = [
    options.registryPath ? `the registry ${options.registryPath}` : "no registry",
    options.priceProvider ? `@pydantic/genai-prices (provider ${options.priceProvider})` : "",
  ].filter(Boolean);
  return `no price known for model "${options.modelName}" (looked in ${looked.join(" and ")})`;
}

function unknownPrice(problem: string, options: PricingOptions): UnknownPriceError {
  const example = JSON.stringify({
    [options.modelName]: { input_cost_per_token: 1e-6, output_cost_per_token: 2e-6 },
  });
  return new UnknownPriceError(
    `${problem}. Register a price in a LiteLLM-format JSON file (model.litellm_model_registry or ` +
      `LITELLM_MODEL_REGISTRY_PATH), e.g. ${example}, or set model.cost_tracking: ignore_errors ` +
      "(or SWERUN_COST_TRACKING=ignore_errors) to record a cost of 0",
  );
}

/** Gateways whose replies carry their own cost (usage.cost), whatever the model. */
const SELF_PRICED = new Set(["openrouter", "requesty"]);

/**
 * Looks the model's price up before any call is made, so that a model without one is refused (exit 2)
 * before the first paid request: the user's registry, else @pydantic/genai-prices. A gateway that reports
 * each call's cost itself needs none; `cost_tracking: ignore_errors` accepts a model without.
 */
export async function checkPriceKnown(options: PricingOptions): Promise<void> {
  if (options.costTracking === "ignore_errors" || SELF_PRICED.has(options.provider)) return;
  if (registryEntry(options)) return;
  if (options.priceProvider) {
    const zero = { prompt_tokens: 0, completion_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0 };
    const known = genaiParts(await loadCalcPrice(), zero, options.apiModel, options.priceProvider);
    if (known) return;
  }
  throw unknownPrice(noPrice(options), options);
}

/**
 * The dollar cost of one response: the provider's own `usage.cost` (OpenRouter) wins, then the user's
 * registry, then @pydantic/genai-prices. Without a price it throws UnknownPriceError, or with
 * `cost_tracking: ignore_errors` returns 0.
 */
export async function responseCost(
  response: { usage?: unknown },
  options: PricingOptions,
): Promise<{ cost: number; source: CostSource }> {
  const reported = count(object(response.usage).cost);
  if (reported !== undefined) return { cost: reported, source: "provider" };
  const usage = normalizeUsage(response.usage);
  const entry = registryEntry(options);
  let problem: string;
  if (!usage) {
    problem = `the response for model "${options.modelName}" reports no token usage, so its cost is unknown`;
  } else if (entry) {
    return { cost: registryCost(entry, usage), source: "registry" };
  } else {
    const price = options.priceProvider
      ? await genaiPrice(usage, options.apiModel, options.priceProvider)
      : null;
    if (price !== null) return { cost: price, source: "genai-prices" };
    problem = noPrice(options);
  }
  if (options.costTracking === "ignore_errors") return { cost: 0, source: "ignored" };
  throw unknownPrice(problem, options);
}

async function genaiPrice(usage: TokenUsage, model: string, providerId: string): Promise<number | null> {
  return genaiParts(await loadCalcPrice(), usage, model, providerId)?.total_price ?? null;
}

/** @pydantic/genai-prices' price of one call (total, input and output); null when it does not know the model. */
export function genaiParts(calcPrice: CalcPrice, usage: TokenUsage, model: string, providerId: string) {
  try {
    return calcPrice(
      {
        input_tokens: usage.prompt_tokens,
        output_tokens: usage.completion_tokens,
        cache_read_tokens: usage.cache_read_tokens,
        cache_write_tokens: usage.cache_write_tokens,
      },
      model,
      { providerId },
    );
  } catch {
    return null;
  }
}
