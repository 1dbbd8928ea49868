/** Anthropic prompt caching: which messages get a `cache_control` mark. */
export type CacheControlMode = "default_end";

type OutgoingMessage = Record<string, unknown>;

const EPHEMERAL = { type: "ephemeral" } as const;

/** Model names that get `default_end` caching unless the config says otherwise (as in mini-swe-agent). */
export function defaultCacheControl(modelName: string): CacheControlMode | null {
  return /anthropic|sonnet|opus|claude/i.test(modelName) ? "default_end" : null;
}

function clearMark(message: OutgoingMessage): void {
  delete message.cache_control;
  if (Array.isArray(message.content)) {
    for (const part of message.content) {
      if (typeof part === "object" && part !== null) delete (part as Record<string, unknown>).cache_control;
    }
  }
}

function setMark(message: OutgoingMessage): void {
  // A tool message, or a message without content (an assistant message of tool calls only), is marked itself.
  if (message.role === "tool" || message.content === null || message.content === undefined) {
    message.cache_control = { ...EPHEMERAL };
    return;
  }
  if (typeof message.content === "string") {
    message.content = [{ type: "text", text: message.content, cache_control: { ...EPHEMERAL } }];
    return;
  }
  const last = Array.isArray(message.content) ? message.content[message.content.length - 1] : undefined;
  if (typeof last === "object" && last !== null)
    (last as Record<string, unknown>).cache_control = { ...EPHEMERAL };
}

/**
 * mini-swe-agent's `set_cache_control(mode="default_end")`: a copy of `messages` with every old mark removed
 * and the last message marked (its text becomes a content part with `cache_control`; a tool message carries
 * the mark on the message itself). Anthropic then caches the whole prefix, and the next call reads it back.
 */
export function setCacheControl(
  messages: readonly OutgoingMessage[],
  mode: CacheControlMode,
): OutgoingMessage[] {
  if (mode !== "default_end") throw new Error(`unknown cache control mode: ${String(mode)}`);
  const copy = structuredClone(messages) as OutgoingMessage[];
  for (const message of copy) clearMark(message);
  const last = copy[copy.length - 1];
  if (last) setMark(last);
  return copy;
}
