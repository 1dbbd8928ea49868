/**
 * mini-swe-agent's messages (chat-completions shape, as litellm takes them) turned into a Messages API request's
 * `system` and `messages`, as litellm turns them: system messages on top, tool results as `tool_result` blocks of
 * a user turn, consecutive turns of one role merged, thinking blocks first in an assistant turn, and each
 * `cache_control` mark moved onto the block it belongs to.
 */
import { UserError } from "../errors.js";

type Json = Record<string, unknown>;
/** A content block of the Messages API. */
export type Block = Json & { type: string };
export interface AnthropicTurn {
  role: "user" | "assistant";
  content: Block[];
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function withMark(block: Block, source: unknown): Block {
  const mark = isObject(source) ? source.cache_control : undefined;
  return isObject(mark) ? { ...block, cache_control: mark } : block;
}

/** An image part (`image_url`) as an image block: a data URL as base64, an https URL as a URL source. */
function imageBlock(part: Json): Block {
  const image = part.image_url;
  const url = typeof image === "string" ? image : isObject(image) ? String(image.url ?? "") : "";
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data) return { type: "image", source: { type: "base64", media_type: data[1], data: data[2] } };
  if (url.startsWith("https://")) return { type: "image", source: { type: "url", url } };
  throw new UserError(
    `an image at ${url.slice(0, 80)} cannot be sent to Anthropic: give a data: URL or an https:// URL`,
  );
}

/** The blocks of a user (or system) message's content: a string is one text block, parts become blocks. */
function userBlocks(message: Json): Block[] {
  const content = message.content;
  if (typeof content === "string") return [withMark({ type: "text", text: content }, message)];
  if (!Array.isArray(content)) return [];
  const blocks: Block[] = [];
  for (const part of content) {
    if (!isObject(part)) continue;
    if (part.type === "text") blocks.push(withMark({ type: "text", text: String(part.text ?? "") }, part));
    else if (part.type === "image_url") blocks.push(withMark(imageBlock(part), part));
  }
  return blocks;
}

/** A tool message as a `tool_result` block; its mark goes on the block, its text then as a one-part list. */
function toolResult(message: Json): Block {
  const content = message.content;
  let result: unknown = "";
  if (typeof content === "string") result = content;
  else if (Array.isArray(content)) result = userBlocks({ content });
  const block: Block = {
    type: "tool_result",
    tool_use_id: String(message.tool_call_id ?? "").replace(/[^a-zA-Z0-9_-]/g, "_"),
    content: result,
  };
  if (isObject(message.cache_control)) {
    if (typeof result === "string") block.content = [{ type: "text", text: result }];
    block.cache_control = message.cache_control;
  }
  return block;
}

function isThinking(block: unknown): block is Block {
  return isObject(block) && (block.type === "thinking" || block.type === "redacted_thinking");
}

/** Thinking blocks as Anthropic takes them back: unsigned ones (which it refuses) left out. */
function replayableThinking(blocks: unknown): Block[] {
  if (!Array.isArray(blocks)) return [];
  return blocks.filter(
    (block): block is Block =>
      isThinking(block) &&
      (block.type === "redacted_thinking" || (typeof block.signature === "string" && block.signature !== "")),
  );
}

function toolUse(call: unknown): Block | undefined {
  if (!isObject(call) || !isObject(call.function)) return undefined;
  const raw = call.function.arguments;
  let input: unknown = {};
  if (typeof raw === "string" && raw.trim()) input = JSON.parse(raw);
  else if (isObject(raw)) input = raw;
  return { type: "tool_use", id: String(call.id ?? ""), name: String(call.function.name ?? ""), input };
}

/** An assistant message's blocks: thinking first, then its text, then its tool calls (each id once). */
function assistantBlocks(message: Json, seen: Set<string>): Block[] {
  const blocks: Block[] = [];
  const content = message.content;
  if (Array.isArray(content)) {
    const listed = content.filter(isThinking);
    const thinking = replayableThinking(message.thinking_blocks);
    if (listed.length === 0) blocks.push(...thinking);
    for (const part of content) {
      if (isThinking(part)) blocks.push(...replayableThinking([part]));
      else if (isObject(part) && part.type === "text" && typeof part.text === "string" && part.text)
        blocks.push(withMark({ type: "text", text: part.text }, part));
    }
  } else {
    blocks.push(...replayableThinking(message.thinking_blocks));
    if (typeof content === "string" && content)
      blocks.push(withMark({ type: "text", text: content }, message));
  }
  for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
    const block = toolUse(call);
    if (!block || seen.has(block.id as string)) continue;
    seen.add(block.id as string);
    blocks.push(block);
  }
  return blocks;
}

/**
 * The request's `system` blocks and alternating turns. `messages` are mini-swe-agent's messages as sent (no
 * `extra`, no exit message), cache marks already set (see cache-control.ts).
 */
export function anthropicMessages(messages: readonly Json[]): { system: Block[]; messages: AnthropicTurn[] } {
  const system: Block[] = [];
  const turns: AnthropicTurn[] = [];
  const seen = new Set<string>();
  const push = (role: AnthropicTurn["role"], blocks: Block[]) => {
    const last = turns[turns.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else if (blocks.length > 0) turns.push({ role, content: blocks });
  };
  for (const message of messages) {
    if (message.role === "system") system.push(...userBlocks(message));
    else if (message.role === "user") push("user", userBlocks(message));
    else if (message.role === "tool" || message.role === "function") push("user", [toolResult(message)]);
    else if (message.role === "assistant") push("assistant", assistantBlocks(message, seen));
  }
  const last = turns[turns.length - 1];
  if (last?.role === "assistant") {
    // Anthropic refuses a final assistant turn that ends in whitespace.
    for (const block of last.content) if (block.type === "text") block.text = String(block.text).trimEnd();
  }
  return { system, messages: turns };
}
