/**
 * The body of a Messages API request as litellm builds it from mini-swe-agent's call: the model's kwargs
 * mapped to Anthropic's parameters (`max_tokens`, `stop` → `stop_sequences`, `parallel_tool_calls` →
 * `tool_choice`, `reasoning_effort` → `thinking`), the bash tool, and the messages (anthropic-messages.ts).
 */
import { UserError } from "../errors.js";
import { anthropicMessages } from "./anthropic-messages.js";
import { CLIENT_KWARGS } from "./client-kwargs.js";
import { BASH_TOOL } from "./toolcall-actions.js";

type Json = Record<string, unknown>;

/** The bash tool in the Messages API's shape (a client tool: `type: "custom"`, as litellm sends it). */
export const ANTHROPIC_BASH_TOOL = {
  name: BASH_TOOL.function.name,
  input_schema: BASH_TOOL.function.parameters,
  type: "custom",
  description: BASH_TOOL.function.description,
} as const;

/** `thinking.budget_tokens` for each `reasoning_effort`, as litellm maps it for models with a thinking budget. */
const THINKING_BUDGET: Record<string, number> = {
  minimal: 1024,
  low: 1024,
  medium: 2048,
  high: 4096,
  xhigh: 8192,
  max: 16384,
};
/** `output_config.effort` for each `reasoning_effort`, for models with adaptive thinking. */
const ADAPTIVE_EFFORT: Record<string, string> = {
  minimal: "low",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "xhigh",
  max: "max",
};
/** Output tokens added to a thinking budget when the config gives no max_tokens (litellm's default). */
const TOKENS_AFTER_THINKING = 4096;

/** Model kwargs that configure the client, or that this builder maps itself. */
const HANDLED = new Set<string>([
  ...CLIENT_KWARGS,
  "max_tokens",
  "max_completion_tokens",
  "stop",
  "user",
  "parallel_tool_calls",
  "tool_choice",
  "reasoning_effort",
  "aws_region_name",
  "aws_bedrock_runtime_endpoint",
  "vertex_project",
  "vertex_location",
  "vertex_credentials",
]);
/** OpenAI parameters the Messages API has no counterpart for: refused, or dropped with `drop_params`. */
const UNSUPPORTED = new Set([
  "n",
  "seed",
  "logprobs",
  "top_logprobs",
  "logit_bias",
  "presence_penalty",
  "frequency_penalty",
  "response_format",
  "modalities",
  "audio",
  "prediction",
  "store",
  "verbosity",
]);

/** A Claude model's family and generation from its name (`claude-sonnet-4-5-20250929`, `claude-3-5-haiku`, `us.anthropic.claude-opus-4-7`, `claude-sonnet-4-5@20250929`). */
function claudeModel(model: string): { family: string; version: number } | undefined {
  const match = /claude-(?:([a-z]+)-)?(\d+)(?:[-.](\d)(?!\d{3}))?/.exec(model.toLowerCase());
  if (!match) return undefined;
  const family = match[1] ?? /claude-[\d.-]+-([a-z]+)/.exec(model.toLowerCase())?.[1] ?? "";
  return { family, version: Number(match[2]) + Number(match[3] ?? 0) / 10 };
}

/** Claude 4.6 and later think adaptively (`thinking: {type: adaptive}` with an effort) instead of with a budget. */
export function hasAdaptiveThinking(model: string): boolean {
  return (claudeModel(model)?.version ?? 0) >= 4.6;
}

/**
 * The most output tokens a Claude model takes, as Anthropic's model overview gives them: the default of
 * `max_tokens`, which the Messages API requires. Models it does not name get 128000, as in litellm.
 */
export function maxOutputTokens(model: string): number {
  const claude = claudeModel(model);
  if (!claude) return 128000;
  const { family, version } = claude;
  if (version < 3.5) return 4096;
  if (version < 3.7) return 8192;
  if (family === "opus" && version < 4.5) return 32000;
  if (version <= 4.5) return 64000;
  return 128000;
}

function thinkingFor(effort: string, model: string): Json {
  if (effort === "none") return {};
  if (hasAdaptiveThinking(model)) {
    const mapped = ADAPTIVE_EFFORT[effort];
    if (!mapped) throw badEffort(effort);
    return { thinking: { type: "adaptive", display: "summarized" }, output_config: { effort: mapped } };
  }
  const budget = THINKING_BUDGET[effort];
  if (budget === undefined) throw badEffort(effort);
  return { thinking: { type: "enabled", budget_tokens: budget } };
}

function badEffort(effort: string): UserError {
  return new UserError(
    `model.model_kwargs.reasoning_effort: "${effort}" is not one of minimal, low, medium, high, xhigh, max, none`,
  );
}

function toolChoice(value: unknown): Json | undefined {
  if (value === "auto") return { type: "auto" };
  if (value === "required") return { type: "any" };
  if (value === "none") return { type: "none" };
  const fn = typeof value === "object" && value !== null ? (value as Json).function : undefined;
  if (typeof fn === "object" && fn !== null) return { type: "tool", name: (fn as Json).name };
  return undefined;
}

/** What `model_kwargs` become in the request: Anthropic's parameters, as litellm maps them. */
export function anthropicParameters(kwargs: Json, model: string, toolCalls: boolean): Json {
  const params: Json = {};
  for (const [name, value] of Object.entries(kwargs)) {
    if (HANDLED.has(name)) continue;
    if (UNSUPPORTED.has(name)) {
      if (kwargs.drop_params === true) continue;
      throw new UserError(
        `model.model_kwargs.${name}: Anthropic's Messages API has no such parameter (set model_kwargs.drop_params: true to leave it out)`,
      );
    }
    params[name] = value;
  }
  if (typeof kwargs.reasoning_effort === "string")
    Object.assign(params, thinkingFor(kwargs.reasoning_effort, model));
  const stop = kwargs.stop;
  if (typeof stop === "string") params.stop_sequences = [stop];
  else if (Array.isArray(stop)) params.stop_sequences = stop;
  if (typeof kwargs.user === "string")
    params.metadata = { ...(params.metadata as Json), user_id: kwargs.user };
  if (toolCalls) {
    const choice = toolChoice(kwargs.tool_choice);
    if (choice) params.tool_choice = choice;
    if (typeof kwargs.parallel_tool_calls === "boolean")
      params.tool_choice = {
        ...((params.tool_choice as Json | undefined) ?? { type: "auto" }),
        disable_parallel_tool_use: !kwargs.parallel_tool_calls,
      };
  }
  const max = kwargs.max_tokens ?? kwargs.max_completion_tokens;
  const thinking = params.thinking as Json | undefined;
  if (typeof max === "number") params.max_tokens = max;
  else if (thinking?.type === "enabled" && typeof thinking.budget_tokens === "number")
    params.max_tokens = thinking.budget_tokens + TOKENS_AFTER_THINKING;
  else params.max_tokens = maxOutputTokens(model);
  return params;
}

/** The whole request body (without `model` for the clouds, whose SDKs put the model in the URL). */
export function anthropicBody(
  messages: readonly Json[],
  kwargs: Json,
  model: string,
  options: { toolCalls: boolean },
): Json {
  const { system, messages: turns } = anthropicMessages(messages);
  const extraBody =
    typeof kwargs.extra_body === "object" && kwargs.extra_body !== null ? kwargs.extra_body : {};
  return {
    model,
    messages: turns,
    ...(system.length > 0 ? { system } : {}),
    ...(options.toolCalls ? { tools: [ANTHROPIC_BASH_TOOL] } : {}),
    ...anthropicParameters(kwargs, model, options.toolCalls),
    ...extraBody,
  };
}
