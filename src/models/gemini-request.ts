import type { ModelConfig } from "../config/schema.js";
import { UserError } from "../errors.js";
import { pythonJsonDumps } from "../python/json-dumps.js";
import { BASH_TOOL } from "./toolcall-actions.js";

type Json = Record<string, unknown>;

/** Where litellm puts a Gemini thought signature in a tool call id, to send it back on the next call. */
const THOUGHT_MARK = "__thought__";

/** Thinking budgets of `reasoning_effort` on Gemini 2.5, as litellm maps them. */
const EFFORT_BUDGETS: Record<string, number> = { minimal: 128, low: 1024, medium: 2048, high: 4096 };

/** model_kwargs that configure the client (or litellm) rather than the request. */
const CLIENT_KWARGS = new Set([
  "api_base",
  "base_url",
  "timeout",
  "drop_params",
  "num_retries",
  "max_retries",
  "extra_headers",
  "vertex_project",
  "vertex_ai_project",
  "vertex_location",
  "vertex_ai_location",
  "vertex_credentials",
  "vertex_ai_credentials",
]);

/** OpenAI-style kwargs and the generation setting litellm sends each as (the SDK's names). */
const GENERATION_FIELDS: Record<string, string> = {
  temperature: "temperature",
  top_p: "topP",
  top_k: "topK",
  max_tokens: "maxOutputTokens",
  max_completion_tokens: "maxOutputTokens",
  stop: "stopSequences",
  n: "candidateCount",
  presence_penalty: "presencePenalty",
  frequency_penalty: "frequencyPenalty",
  seed: "seed",
};

function thinkingConfig(model: string, kwargs: Json): Json | undefined {
  const thinking = kwargs.thinking as { type?: unknown; budget_tokens?: unknown } | undefined;
  if (thinking && typeof thinking === "object") {
    if (thinking.type === "disabled") return { thinkingBudget: 0 };
    return { thinkingBudget: Number(thinking.budget_tokens ?? EFFORT_BUDGETS.medium), includeThoughts: true };
  }
  const effort = kwargs.reasoning_effort;
  if (typeof effort !== "string") return undefined;
  if (effort === "none" || effort === "disable") return { thinkingBudget: 0 };
  // Gemini 3 takes a thinking level instead of a budget.
  if (/gemini-3/.test(model))
    return { thinkingLevel: effort === "high" ? "high" : "low", includeThoughts: true };
  const budget = EFFORT_BUDGETS[effort];
  if (budget === undefined)
    throw new UserError(
      `model.model_kwargs.reasoning_effort: "${effort}" is not one of ${Object.keys(EFFORT_BUDGETS).join(", ")}, none`,
    );
  return { thinkingBudget: budget, includeThoughts: true };
}

/**
 * The generation settings a config's model_kwargs give (the SDK's `config`; generationConfig on the wire), as
 * litellm maps them; a kwarg Gemini has no field for is a UserError before any call, unless `drop_params`.
 */
export function geminiRequestFields(config: ModelConfig, model: string): Json {
  const kwargs = config.model_kwargs;
  const generation: Json = {};
  for (const [name, value] of Object.entries(kwargs)) {
    if (CLIENT_KWARGS.has(name) || name === "reasoning_effort" || name === "thinking") continue;
    const field = GENERATION_FIELDS[name];
    if (field) generation[field] = name === "stop" && typeof value === "string" ? [value] : value;
    else if (name === "parallel_tool_calls" || kwargs.drop_params === true) continue;
    else
      throw new UserError(
        `model.model_kwargs.${name}: not a setting Gemini on Vertex AI takes (set drop_params: true to leave it out)`,
      );
  }
  const thinking = thinkingConfig(model, kwargs);
  if (thinking) generation.thinkingConfig = thinking;
  return generation;
}

/** The bash tool as a Gemini function declaration. */
export const GEMINI_TOOLS = [{ functionDeclarations: [BASH_TOOL.function] }];

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("");
}

function userParts(content: unknown): Json[] {
  if (!Array.isArray(content)) return [{ text: textOf(content) }];
  return (content as Json[]).map((part) =>
    part.type === "image_url"
      ? { fileData: { fileUri: (part.image_url as { url?: string } | undefined)?.url ?? "" } }
      : { text: typeof part.text === "string" ? part.text : "" },
  );
}

function modelParts(message: Json): Json[] {
  const parts: Json[] = [];
  for (const block of (message.thinking_blocks as Json[] | undefined) ?? []) {
    if (block.type === "thinking" && typeof block.thinking === "string")
      parts.push({ thought: true, text: block.thinking });
  }
  const text = textOf(message.content);
  if (text) parts.push({ text });
  for (const call of (message.tool_calls as Json[] | undefined) ?? []) {
    const fn = (call.function ?? {}) as { name?: string; arguments?: string };
    const id = String(call.id ?? "");
    const mark = id.indexOf(THOUGHT_MARK);
    let args: unknown = {};
    try {
      args = JSON.parse(fn.arguments || "{}");
    } catch {
      args = {};
    }
    parts.push({
      functionCall: { name: fn.name ?? "", args },
      ...(mark >= 0 ? { thoughtSignature: id.slice(mark + THOUGHT_MARK.length) } : {}),
    });
  }
  return parts;
}

/**
 * Chat messages as litellm sends them to Gemini: system messages become `systemInstruction`, assistant
 * messages `model` turns (thinking blocks as thought parts, tool calls as function calls with their thought
 * signatures), consecutive tool results one user turn of function responses, consecutive user messages one
 * user turn.
 */
export function geminiContents(messages: Json[]): { contents: Json[]; systemInstruction?: Json } {
  const system: Json[] = [];
  const contents: Json[] = [];
  const names = new Map<string, string>();
  let last: { role: string; tool: boolean; parts: Json[] } | undefined;
  for (const message of messages) {
    if (message.role === "system") {
      system.push({ text: textOf(message.content) });
      continue;
    }
    if (message.role === "assistant") {
      for (const call of (message.tool_calls as Json[] | undefined) ?? [])
        names.set(String(call.id), String((call.function as Json | undefined)?.name ?? ""));
      last = { role: "model", tool: false, parts: modelParts(message) };
      contents.push({ role: "model", parts: last.parts });
      continue;
    }
    const tool = message.role === "tool";
    const parts = tool
      ? [
          {
            functionResponse: {
              name: names.get(String(message.tool_call_id)) ?? "bash",
              response: { content: textOf(message.content) },
            },
          },
        ]
      : userParts(message.content);
    if (last && last.role === "user" && last.tool === tool) last.parts.push(...parts);
    else {
      last = { role: "user", tool, parts };
      contents.push({ role: "user", parts });
    }
  }
  return { contents, ...(system.length > 0 ? { systemInstruction: { parts: system } } : {}) };
}

/** litellm's tool call id: `call_` and 28 hex digits, the thought signature after `__thought__`. */
export function toolCallId(signature: string | undefined): string {
  const id = `call_${crypto.randomUUID().replaceAll("-", "").slice(0, 28)}`;
  return signature ? `${id}${THOUGHT_MARK}${signature}` : id;
}

/** A function call's arguments as litellm writes them (Python's json.dumps). */
export function callArguments(args: unknown): string {
  return pythonJsonDumps(args ?? {});
}
