import { callTokens, NO_TOKENS, type TokenFacts, totalTokens } from "../facts/run-facts.js";
import type { ModelFacts } from "../models/model-facts.js";

/** Context usage thresholds that raise a `context_limit_warning`, in percent. */
const THRESHOLDS = [60, 80, 90, 95];

interface CallUsage {
  /** The call's token counts (see `callTokens`); none when its response recorded no usage. */
  tokens: TokenFacts;
  cost: number;
  raw: unknown;
}

/** A percentage as SwarmSDK writes it (a Ruby float rounded to 2 places): `6.23%`, `82.5%`, `60.0%`. */
export function percent(part: number, whole: number): string {
  const value = Math.round((part / whole) * 10000) / 100;
  return `${Number.isInteger(value) ? value.toFixed(1) : String(value)}%`;
}

/**
 * The model calls of one swarm, as its events report them: the last call's usage, the context the
 * conversation fills (the last prompt and every output), and the swarm's cost and total tokens.
 */
export class SwarmUsage {
  #call: CallUsage | undefined;
  #lastPrompt = 0;
  #outputTokens = 0;
  #totalTokens = 0;
  #totalCost = 0;
  #warned = new Set<number>();

  /** Cost of every model call so far. */
  get cost(): number {
    return this.#totalCost;
  }

  /** Total tokens (see `totalTokens`) of every model call so far. */
  get tokens(): number {
    return this.#totalTokens;
  }

  /** A model call that ended: its usage as the response recorded it (`raw`) and its cost. */
  callEnd(raw: unknown, cost: number): void {
    const tokens = callTokens(raw);
    this.#call = { tokens: tokens ?? NO_TOKENS, cost, raw };
    if (tokens) this.#lastPrompt = tokens.prompt;
    this.#outputTokens += tokens?.completion ?? 0;
    this.#totalTokens += tokens ? totalTokens(tokens) : 0;
    this.#totalCost += cost;
  }

  /** The last call's usage as SwarmSDK reports it (context keys only when the context window is known). */
  usage(facts: ModelFacts): Record<string, unknown> | undefined {
    const call = this.#call;
    if (!call) return undefined;
    const split = facts.splitCost?.(call.raw);
    const cumulative = this.#lastPrompt + this.#outputTokens;
    const limit = facts.contextWindow;
    return {
      input_tokens: call.tokens.input,
      output_tokens: call.tokens.completion,
      total_tokens: totalTokens(call.tokens),
      ...(split ? { input_cost: split.input_cost, output_cost: split.output_cost } : {}),
      total_cost: call.cost,
      // SwarmSDK's cumulative figures measure the context: the last prompt (cache included) and every output.
      cumulative_input_tokens: this.#lastPrompt,
      cumulative_output_tokens: this.#outputTokens,
      cumulative_total_tokens: cumulative,
      ...(limit
        ? {
            context_limit: limit,
            tokens_used_percentage: percent(cumulative, limit),
            tokens_remaining: limit - cumulative,
          }
        : {}),
    };
  }

  /**
   * The fields of a `context_limit_warning` for each threshold the conversation crossed (each once per swarm),
   * measured as the usage's `tokens_used_percentage`: the cumulative total (last prompt plus every completion).
   */
  contextWarnings(facts: ModelFacts): Array<Record<string, unknown>> {
    const limit = facts.contextWindow;
    if (!limit) return [];
    const used = this.#lastPrompt + this.#outputTokens;
    const warnings: Array<Record<string, unknown>> = [];
    for (const threshold of THRESHOLDS) {
      if (used < (limit * threshold) / 100 || this.#warned.has(threshold)) continue;
      this.#warned.add(threshold);
      warnings.push({
        model: facts.name,
        threshold: `${threshold}%`,
        current_usage: percent(used, limit),
        tokens_used: used,
        tokens_remaining: limit - used,
        context_limit: limit,
        metadata: {},
        compression_triggered: false,
      });
    }
    return warnings;
  }
}
