import { createHash } from "node:crypto";

// biome-ignore lint/suspicious/noExplicitAny: request bodies are arbitrary JSON
type Json = any;

/**
 * Prompt caching as Anthropic accounts for it, on a model of token counts (scripts/gen-provider-fixtures.py
 * has the same one, for mini-swe-agent's run). The prompt is its tools, system blocks and message blocks in
 * order; a block counts 4 tokens plus a token per 4 characters of its text (a tool 300). A `cache_control`
 * mark ends a prefix: the longest prefix written before that ends within 20 blocks before a mark is read from
 * the cache, the rest up to the last mark is written (if that prefix holds at least 1024 tokens), and what
 * follows the last mark is uncached input. The marks do not change the content: a prefix written with a mark
 * is read back without it.
 */
export class PromptCache {
  static readonly MIN_TOKENS = 1024;
  static readonly LOOKBACK = 20;
  static readonly TOOL_TOKENS = 300;
  readonly #written = new Set<string>();

  static blockText(block: Json): string {
    switch (block.type) {
      case "text":
        return block.text ?? "";
      case "tool_use":
        return `${block.name ?? ""} ${String(block.input?.command ?? "")}`;
      case "tool_result":
        return typeof block.content === "string"
          ? block.content
          : (block.content ?? [])
              .filter((part: Json) => part.type === "text")
              .map((part: Json) => part.text ?? "")
              .join("");
      case "thinking":
        return block.thinking ?? "";
      case "redacted_thinking":
        return block.data ?? "";
      default:
        return "";
    }
  }

  /** [key, tokens, marked] of each block of the prompt, in order. */
  static blocks(body: Json): Array<[string, number, boolean]> {
    const out: Array<[string, number, boolean]> = [];
    const tokens = (text: string) => 4 + Math.ceil(text.length / 4);
    for (const tool of body.tools ?? [])
      out.push([`tool:${tool.name ?? ""}`, PromptCache.TOOL_TOKENS, "cache_control" in tool]);
    const system =
      typeof body.system === "string" ? [{ type: "text", text: body.system }] : (body.system ?? []);
    for (const block of system) {
      const text = PromptCache.blockText(block);
      out.push([`system:text:${text}`, tokens(text), "cache_control" in block]);
    }
    for (const message of body.messages) {
      const content =
        typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
      for (const block of content) {
        const text = PromptCache.blockText(block);
        out.push([`${message.role}:${block.type}:${text}`, tokens(text), "cache_control" in block]);
      }
    }
    return out;
  }

  /** The usage Anthropic would report for this request body, and the prefixes it writes to the cache. */
  usage(body: Json, outputTokens: number) {
    const blocks = PromptCache.blocks(body);
    const prefixes: string[] = [];
    const totals: number[] = [];
    const digest = createHash("sha256");
    let total = 0;
    for (const [key, tokens] of blocks) {
      digest.update(`${key}\0`, "utf8");
      prefixes.push(digest.copy().digest("hex"));
      total += tokens;
      totals.push(total);
    }
    const marks = blocks.flatMap(([, , marked], index) => (marked ? [index] : []));
    let readEnd = -1;
    for (const mark of marks) {
      for (let i = mark; i > Math.max(-1, mark - PromptCache.LOOKBACK - 1); i--) {
        if (this.#written.has(prefixes[i] as string)) {
          readEnd = Math.max(readEnd, i);
          break;
        }
      }
    }
    const read = readEnd >= 0 ? (totals[readEnd] as number) : 0;
    let write = 0;
    const last = marks[marks.length - 1];
    if (last !== undefined && (totals[last] as number) >= PromptCache.MIN_TOKENS) {
      write = last > readEnd ? (totals[last] as number) - read : 0;
      for (const mark of marks)
        if ((totals[mark] as number) >= PromptCache.MIN_TOKENS) this.#written.add(prefixes[mark] as string);
    }
    return {
      input_tokens: total - read - write,
      cache_creation_input_tokens: write,
      cache_read_input_tokens: read,
      output_tokens: outputTokens,
    };
  }
}
