import { FormatError } from "../errors.js";
import type { Action, Message } from "../messages.js";
import { type FormatErrorVars, formatError } from "./text-actions.js";

/** The one tool a tool-calling model gets, as in mini-swe-agent. */
export const BASH_TOOL = {
  type: "function",
  function: {
    name: "bash",
    description: "Execute a bash command",
    parameters: {
      type: "object",
      properties: {
        command: { type: "string", description: "The bash command to execute" },
      },
      required: ["command"],
    },
  },
} as const;

interface ToolCall {
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

function toolCalls(message: Message): ToolCall[] {
  return Array.isArray(message.tool_calls) ? (message.tool_calls as ToolCall[]) : [];
}

/**
 * The FormatError for a tool-call response. Every tool call of the response is answered: the rendered
 * feedback goes out once per call as a `role: "tool"` message with its `tool_call_id` (chat APIs reject a
 * conversation with an unanswered tool call); a response without tool calls gets it as a user message.
 */
export function toolCallFormatError(
  assistant: Message,
  template: string,
  vars: FormatErrorVars,
  templateVars: Record<string, unknown> = {},
): FormatError {
  const error = formatError(assistant, template, vars, templateVars);
  const ids = toolCalls(assistant).map((call) => call.id);
  const [recorded, feedback] = error.messages;
  if (!recorded || !feedback || ids.length === 0 || !ids.every((id) => typeof id === "string" && id))
    return error;
  return new FormatError(
    recorded,
    ...ids.map((id) => ({ ...feedback, role: "tool" as const, tool_call_id: id as string })),
  );
}

function parseArguments(raw: unknown): { args: Record<string, unknown>; problem: string } {
  if (typeof raw === "object" && raw !== null && !Array.isArray(raw)) {
    return { args: raw as Record<string, unknown>, problem: "" };
  }
  try {
    const parsed: unknown = JSON.parse(typeof raw === "string" ? raw : "");
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
      return { args: parsed as Record<string, unknown>, problem: "" };
    }
    return { args: {}, problem: "Tool call arguments must be a JSON object. " };
  } catch (error) {
    return { args: {}, problem: `Error parsing tool call arguments: ${(error as Error).message}. ` };
  }
}

/**
 * The actions of a tool-call response: one per `bash` call, in order, each with its `tool_call_id`.
 * No tool call, an unknown tool, arguments that are not a JSON object, a missing or non-string `command`,
 * or output cut at the token limit (`finish_reason: length`) throw a FormatError instead; then no call runs.
 */
export function parseToolCallActions(
  assistant: Message,
  formatErrorTemplate: string,
  finishReason: string | null = null,
  templateVars: Record<string, unknown> = {},
): Action[] {
  const calls = toolCalls(assistant);
  const actions: Action[] = [];
  const problems: string[] = [];
  for (const call of calls) {
    const name = call.function?.name;
    const { args, problem } = parseArguments(call.function?.arguments);
    let message = problem;
    if (name !== "bash") message += `Unknown tool '${String(name)}'. `;
    if (!problem && !("command" in args)) message += "Missing 'command' argument in bash tool call. ";
    else if (!problem && typeof args.command !== "string")
      message += "The 'command' argument must be a string. ";
    if (message) problems.push(message.trim());
    else
      actions.push({
        command: args.command as string,
        ...(typeof call.id === "string" ? { tool_call_id: call.id } : {}),
      });
  }
  const fail = (error: string) =>
    toolCallFormatError(
      assistant,
      formatErrorTemplate,
      {
        error,
        actions: actions.map((action) => action.command),
        has_tool_calls: calls.length > 0,
        finish_reason: finishReason,
      },
      templateVars,
    );
  if (finishReason === "length") {
    throw fail("The response was cut off at the token limit (finish_reason: length).");
  }
  if (calls.length === 0) {
    throw fail("No tool calls found in the response. Every response MUST include at least one tool call.");
  }
  if (problems.length > 0) throw fail(problems.join(" "));
  return actions;
}
