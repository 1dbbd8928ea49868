import type { Action } from "../messages.js";
import { PythonJsonError, pythonJsonLoads } from "../python/json-loads.js";
import { formatError } from "./text-actions.js";

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

/**
 * The actions of a tool-call response, as mini-swe-agent parses them: one per `bash` call, in order, each
 * with its `tool_call_id`. No tool call, or a call with an unknown tool, arguments that are not JSON
 * (Python's error text), or no `command` throws a FormatError (the first bad call's errors); then no call runs.
 */
export function parseToolCallActions(
  toolCalls: unknown,
  formatErrorTemplate: string,
  finishReason: string | null = null,
): Action[] {
  const calls = (Array.isArray(toolCalls) ? toolCalls : []) as ToolCall[];
  if (calls.length === 0) {
    throw formatError(formatErrorTemplate, {
      error: "No tool calls found in the response. Every response MUST include at least one tool call.",
      actions: [],
      has_tool_calls: false,
      finish_reason: finishReason,
    });
  }
  const actions: Action[] = [];
  for (const call of calls) {
    let error = "";
    let args: unknown = {};
    const raw = call.function?.arguments;
    try {
      args = typeof raw === "string" ? pythonJsonLoads(raw) : raw;
    } catch (problem) {
      if (!(problem instanceof PythonJsonError)) throw problem;
      error = `Error parsing tool call arguments: ${problem.message}.`;
    }
    if (call.function?.name !== "bash") error += `Unknown tool '${String(call.function?.name)}'.`;
    const isObject = typeof args === "object" && args !== null && !Array.isArray(args);
    if (!isObject || !("command" in (args as object)))
      error += "Missing 'command' argument in bash tool call.";
    else if (typeof (args as { command: unknown }).command !== "string")
      error += "The 'command' argument must be a string.";
    if (error) {
      throw formatError(formatErrorTemplate, {
        actions: [],
        error: error.trim(),
        has_tool_calls: true,
        finish_reason: finishReason,
      });
    }
    actions.push({
      command: (args as { command: string }).command,
      ...(typeof call.id === "string" ? { tool_call_id: call.id } : {}),
    });
  }
  return actions;
}
