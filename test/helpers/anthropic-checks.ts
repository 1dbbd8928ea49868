/**
 * The checks Anthropic's Messages API makes of a request body before it answers (as its documentation and
 * its error messages describe them), for the local servers that stand in for it: each returns the error
 * message the API would give, or undefined when the body is valid.
 */

// biome-ignore lint/suspicious/noExplicitAny: request bodies are arbitrary JSON
type Body = any;
// biome-ignore lint/suspicious/noExplicitAny: content blocks are arbitrary JSON
type Block = any;

const USER_BLOCKS = new Set(["text", "image", "document", "tool_result", "search_result"]);
const ASSISTANT_BLOCKS = new Set(["text", "tool_use", "thinking", "redacted_thinking", "server_tool_use"]);

function countMarks(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + countMarks(item), 0);
  if (typeof value !== "object" || value === null) return 0;
  let count = "cache_control" in value ? 1 : 0;
  for (const [key, item] of Object.entries(value)) if (key !== "cache_control") count += countMarks(item);
  return count;
}

function checkBlocks(turn: Body, index: number): string | undefined {
  const allowed = turn.role === "user" ? USER_BLOCKS : ASSISTANT_BLOCKS;
  if (typeof turn.content === "string")
    return turn.content ? undefined : `messages.${index}: content must be non-empty`;
  if (!Array.isArray(turn.content) || turn.content.length === 0)
    return `messages.${index}: all messages must have non-empty content`;
  for (const [at, block] of (turn.content as Block[]).entries()) {
    if (!allowed.has(block?.type))
      return `messages.${index}.content.${at}: Input tag '${block?.type}' found using 'type' does not match any of the expected tags`;
    if (block.type === "text" && (typeof block.text !== "string" || block.text === ""))
      return `messages: text content blocks must be non-empty`;
  }
  return undefined;
}

/** A tool_result needs its tool_use in the assistant turn just before; every tool_use needs its result next. */
function checkToolPairs(messages: Body[]): string | undefined {
  for (const [index, turn] of messages.entries()) {
    const blocks: Block[] = Array.isArray(turn.content) ? turn.content : [];
    if (turn.role === "assistant") {
      const uses = blocks.filter((b) => b.type === "tool_use").map((b) => b.id);
      if (uses.length === 0) continue;
      const next = messages[index + 1];
      const results = new Set(
        (Array.isArray(next?.content) ? next.content : [])
          .filter((b: Block) => b.type === "tool_result")
          .map((b: Block) => b.tool_use_id),
      );
      const missing = uses.filter((id) => !results.has(id));
      if (next && missing.length > 0)
        return `messages.${index + 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    } else {
      const previous = messages[index - 1];
      const uses = new Set(
        (Array.isArray(previous?.content) ? previous.content : [])
          .filter((b: Block) => b.type === "tool_use")
          .map((b: Block) => b.id),
      );
      let seenOther = false;
      for (const [at, block] of blocks.entries()) {
        if (block.type !== "tool_result") {
          seenOther = true;
          continue;
        }
        if (!uses.has(block.tool_use_id))
          return `messages.${index}.content.${at}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        if (seenOther)
          return `messages.${index}: tool_result blocks must come first in the content, before any text`;
      }
    }
  }
  return undefined;
}

/** With thinking on, thinking blocks come back signed, and the last assistant turn that uses a tool starts with one. */
function checkThinking(body: Body): string | undefined {
  const on = body.thinking?.type === "enabled" || body.thinking?.type === "adaptive";
  if (body.thinking?.type === "enabled") {
    const budget = body.thinking.budget_tokens;
    if (!Number.isInteger(budget) || budget < 1024)
      return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024";
    if (budget >= body.max_tokens) return "`max_tokens` must be greater than `thinking.budget_tokens`";
  }
  const assistants = (body.messages as Body[]).filter((m) => m.role === "assistant");
  for (const turn of assistants) {
    for (const block of Array.isArray(turn.content) ? (turn.content as Block[]) : []) {
      if (block.type === "thinking" && (typeof block.signature !== "string" || block.signature === ""))
        return "messages: `thinking` blocks must have a valid `signature`";
      if (block.type === "redacted_thinking" && typeof block.data !== "string")
        return "messages: `redacted_thinking` blocks must have `data`";
    }
  }
  const last = assistants[assistants.length - 1];
  const blocks: Block[] = Array.isArray(last?.content) ? last.content : [];
  if (
    on &&
    blocks.some((b) => b.type === "tool_use") &&
    !["thinking", "redacted_thinking"].includes(blocks[0]?.type)
  )
    return (
      "messages: Expected `thinking` or `redacted_thinking`, but found `" +
      blocks[0]?.type +
      "`. When `thinking` is enabled, a final `assistant` message must start with a thinking block."
    );
  return undefined;
}

/** Why the Messages API would refuse `body` (400 invalid_request_error), or undefined. */
export function messagesRequestProblem(body: Body, options: { modelInBody: boolean }): string | undefined {
  if (typeof body !== "object" || body === null) return "the request body is not a JSON object";
  if (options.modelInBody && typeof body.model !== "string") return "model: Field required";
  if (!options.modelInBody && "model" in body) return "model: Extra inputs are not permitted";
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return "max_tokens: Field required";
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) return "messages: at least one message is required";
  if (messages[0].role !== "user") return 'messages: first message must use the "user" role';
  for (const [index, turn] of (messages as Body[]).entries()) {
    if (turn.role !== "user" && turn.role !== "assistant")
      return `messages.${index}.role: Input should be 'user' or 'assistant'`;
    if (index > 0 && messages[index - 1].role === turn.role)
      return (
        'messages: roles must alternate between "user" and "assistant", but found multiple "' +
        turn.role +
        '" roles in a row'
      );
    const problem = checkBlocks(turn, index);
    if (problem) return problem;
  }
  if (body.system !== undefined && typeof body.system !== "string" && !Array.isArray(body.system))
    return "system: Input should be a valid string or list";
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    if (typeof tool.name !== "string" || typeof tool.input_schema !== "object")
      return "tools: each tool needs a name and an input_schema";
  }
  const blocks = (messages as Body[]).flatMap((m) =>
    Array.isArray(m.content) ? (m.content as Block[]) : [],
  );
  if (!Array.isArray(body.tools) && blocks.some((b) => b.type === "tool_use" || b.type === "tool_result"))
    return "Requests which include `tool_use` or `tool_result` blocks must define tools.";
  const marks = countMarks([body.system, body.tools, messages]);
  if (marks > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${marks}.`;
  return checkToolPairs(messages) ?? checkThinking(body);
}
