import type { Message, MessageContent } from "../messages.js";
import { pythonRegex } from "../python/regex.js";

/**
 * mini-swe-agent's default `multimodal_regex` (its tag for an image in a prompt or an output); the config
 * must name it to turn it on, as in mini-swe-agent, where the empty default turns the expansion off.
 */
export const DEFAULT_MULTIMODAL_REGEX =
  "(?s)<MSWEA_MULTIMODAL_CONTENT><CONTENT_TYPE>(.+?)</CONTENT_TYPE>(.+?)</MSWEA_MULTIMODAL_CONTENT>";

/** One part of a message's content in the OpenAI shape. */
export type ContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

const compiled = new Map<string, RegExp>();

function regexOf(pattern: string): RegExp {
  let regex = compiled.get(pattern);
  if (!regex) {
    regex = pythonRegex(pattern);
    compiled.set(pattern, regex);
  }
  regex.lastIndex = 0;
  return regex;
}

/**
 * A content string as mini-swe-agent's `expand_multimodal_content` turns it into parts: the text between
 * matches as text parts, each match whose first group is `image_url` as an image part with its second
 * group (both stripped) as the URL; a match of another content type is dropped. No match: one text part.
 */
export function expandContent(content: string, pattern: string): ContentPart[] {
  const parts: ContentPart[] = [];
  let last = 0;
  let matched = false;
  for (const match of content.matchAll(regexOf(pattern))) {
    matched = true;
    const before = content.slice(last, match.index);
    if (before) parts.push({ type: "text", text: before });
    if ((match[1] ?? "").trim() === "image_url")
      parts.push({ type: "image_url", image_url: { url: (match[2] ?? "").trim() } });
    last = match.index + match[0].length;
  }
  if (!matched) return [{ type: "text", text: content }];
  const after = content.slice(last);
  if (after) parts.push({ type: "text", text: after });
  return parts;
}

/**
 * A message with its content expanded as mini-swe-agent expands a message (`model.multimodal_regex`):
 * a string content becomes a list of parts (a text part when nothing matches), each string of a list is
 * expanded in place, any other value becomes its string form. An empty pattern leaves the message as it is.
 */
export function expandMessage(message: Message, pattern: string): Message {
  if (!pattern || !("content" in message)) return message;
  // Python's walk over whatever the content holds: what it gives back is the content's shape again.
  return { ...message, content: expandValue(message.content, pattern) as MessageContent };
}

function expandValue(value: unknown, pattern: string): unknown {
  if (typeof value === "string") return expandContent(value, pattern);
  if (Array.isArray(value)) return value.map((item) => expandValue(item, pattern));
  if (typeof value === "object" && value !== null) {
    if (!("content" in value)) return value;
    return { ...value, content: expandValue((value as { content: unknown }).content, pattern) };
  }
  return pythonStr(value);
}

/** Python's `str()` of a JSON scalar (None, True, False, numbers). */
function pythonStr(value: unknown): string {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  return String(value);
}
