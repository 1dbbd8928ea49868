/**
 * A Messages API response in the chat-completion shape litellm gives mini-swe-agent: the text joined as
 * `content`, `tool_use` blocks as `tool_calls` (their arguments as Python's `json.dumps` writes them),
 * thinking blocks kept as `thinking_blocks` with their signatures and joined as `reasoning_content`, and the
 * usage with the cache tokens counted in `prompt_tokens`.
 */
import { randomUUID } from "node:crypto";
import { pythonJsonDumps } from "../python/json-dumps.js";

type Json = Record<string, unknown>;

const FINISH_REASONS: Record<string, string> = {
  end_turn: "stop",
  stop_sequence: "stop",
  tool_use: "tool_calls",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  pause_turn: "stop",
  refusal: "content_filter",
};

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** The usage as litellm reports it: `prompt_tokens` counts the cache reads and writes, with details. */
export function chatUsage(usage: Json): Json {
  const cacheWrite = count(usage.cache_creation_input_tokens);
  const cacheRead = count(usage.cache_read_input_tokens);
  const input = count(usage.input_tokens);
  const completion = count(usage.output_tokens);
  const prompt = input + cacheWrite + cacheRead;
  const details = usage.output_tokens_details as Json | undefined;
  const thinking =
    typeof details?.thinking_tokens === "number" ? Math.min(details.thinking_tokens, completion) : undefined;
  return {
    completion_tokens: completion,
    prompt_tokens: prompt,
    total_tokens: prompt + completion,
    // Anthropic reports no thinking tokens of its own unless it says so; litellm then estimates them.
    completion_tokens_details:
      thinking === undefined
        ? { reasoning_tokens: null, text_tokens: null }
        : { reasoning_tokens: thinking, text_tokens: completion - thinking },
    prompt_tokens_details: {
      audio_tokens: null,
      cache_write_tokens: cacheWrite,
      cached_tokens: cacheRead,
      image_tokens: null,
      text_tokens: input,
      video_tokens: null,
      initial_prompt_tokens: null,
      cache_creation_tokens: cacheWrite,
    },
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
    iterations: usage.iterations ?? null,
    inference_geo: usage.inference_geo ?? null,
    speed: usage.speed ?? null,
    service_tier: usage.service_tier ?? null,
  };
}

/** The assistant message of the chat completion. */
function chatMessage(blocks: Json[]): Json {
  let text = "";
  let thinking: Json[] | null = null;
  const toolCalls: Json[] = [];
  blocks.forEach((block, index) => {
    if (block.type === "text") text += String(block.text ?? "");
    else if (block.type === "tool_use") {
      toolCalls.push({
        index,
        function: { arguments: pythonJsonDumps(block.input ?? {}), name: block.name },
        id: block.id,
        type: "function",
      });
    } else if (block.type === "thinking" || block.type === "redacted_thinking") {
      thinking ??= [];
      thinking.push(block);
    }
  });
  const message: Json = {
    content: text || null,
    role: "assistant",
    tool_calls: toolCalls.length > 0 ? toolCalls : null,
    function_call: null,
  };
  if (thinking) {
    message.reasoning_content = (thinking as Json[])
      .map((block) => (typeof block.thinking === "string" ? block.thinking : ""))
      .join("");
    message.thinking_blocks = thinking;
  }
  message.provider_specific_fields = { citations: null, thinking_blocks: thinking };
  return message;
}

/** The chat completion litellm makes of a Messages API response (`id` and `created` are its own, as there). */
export function chatCompletion(response: Json): Json {
  const blocks = Array.isArray(response.content) ? (response.content as Json[]) : [];
  const stop = typeof response.stop_reason === "string" ? response.stop_reason : "";
  return {
    id: `chatcmpl-${randomUUID()}`,
    created: Math.floor(Date.now() / 1000),
    model: response.model,
    object: "chat.completion",
    choices: [{ finish_reason: FINISH_REASONS[stop] ?? "stop", index: 0, message: chatMessage(blocks) }],
    usage: chatUsage((response.usage as Json | undefined) ?? {}),
  };
}
