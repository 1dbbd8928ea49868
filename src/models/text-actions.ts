import { FormatError } from "../errors.js";
import type { Action, ExecOutput, Message } from "../messages.js";
import { renderTemplate } from "../templates/render.js";

const compiled = new Map<string, RegExp>();

/** Python's `re.findall(regex, text, re.DOTALL)` for a regex with one group, in JavaScript. */
function findAll(actionRegex: string, text: string): string[] {
  let regex = compiled.get(actionRegex);
  if (!regex) {
    regex = new RegExp(actionRegex, "gs");
    compiled.set(actionRegex, regex);
  }
  regex.lastIndex = 0;
  return [...text.matchAll(regex)].map((match) => match[1] ?? match[0]);
}

/** What a format-error template can use. */
export interface FormatErrorVars {
  error: string;
  actions: string[];
  has_tool_calls: boolean;
  finish_reason: string | null;
}

/** Builds the FormatError for a malformed response: the response is kept, the rendered feedback follows it. */
export function formatError(
  assistant: Message,
  template: string,
  vars: FormatErrorVars,
  templateVars: Record<string, unknown> = {},
): FormatError {
  const content = renderTemplate(template, { ...templateVars, ...vars }, "format_error_template");
  const extra = { ...(assistant.extra ?? {}), actions: [], format_error: vars.error };
  return new FormatError(
    { ...assistant, extra },
    { role: "user", content, extra: { interrupt_type: "FormatError", timestamp: Date.now() / 1000 } },
  );
}

/**
 * Text-based actions: exactly one match of `actionRegex` (its first group, stripped) in the content,
 * else a FormatError rendered from the format-error template.
 */
export function parseTextActions(
  assistant: Message,
  actionRegex: string,
  formatErrorTemplate: string,
  finishReason: string | null = null,
): Action[] {
  const content = typeof assistant.content === "string" ? assistant.content : "";
  const actions = findAll(actionRegex, content).map((action) => action.trim());
  if (finishReason === "length") {
    throw formatError(assistant, formatErrorTemplate, {
      error: "The response was cut off at the token limit (finish_reason: length).",
      actions,
      has_tool_calls: false,
      finish_reason: finishReason,
    });
  }
  if (actions.length !== 1) {
    throw formatError(assistant, formatErrorTemplate, {
      error: `Expected exactly one action, found ${actions.length}.`,
      actions,
      has_tool_calls: false,
      finish_reason: finishReason,
    });
  }
  return actions.map((command) => ({ command }));
}

/**
 * One observation message per output, rendered from the observation template. Actions that came from
 * tool calls answer with `role: "tool"` and their `tool_call_id`; text actions answer as the user.
 */
export function formatObservations(
  actions: Action[],
  outputs: ExecOutput[],
  observationTemplate: string,
  templateVars: Record<string, unknown>,
): Message[] {
  return outputs.map((output, index) => {
    const content = renderTemplate(observationTemplate, { ...templateVars, output }, "observation_template");
    const extra = {
      raw_output: output.output,
      returncode: output.returncode,
      timestamp: Date.now() / 1000,
      exception_info: output.exception_info,
      ...(output.extra ?? {}),
    };
    const toolCallId = actions[index]?.tool_call_id;
    return toolCallId
      ? { role: "tool", tool_call_id: toolCallId, content, extra }
      : { role: "user", content, extra };
  });
}

/**
 * The observation messages for a model message's own actions (what every model's formatObservations does).
 * Tool calls that did not run (the run stopped part-way) are answered as not executed, since chat APIs
 * reject a conversation with an unanswered tool call.
 */
export function observationsFor(
  message: Message,
  outputs: ExecOutput[],
  observationTemplate: string,
  templateVars: Record<string, unknown>,
): Message[] {
  const actions = (message.extra?.actions ?? []) as Action[];
  const answered = [...outputs];
  if (actions.some((action) => action.tool_call_id)) {
    while (answered.length < actions.length) {
      answered.push({ output: "", returncode: -1, exception_info: "action was not executed" });
    }
  }
  return formatObservations(actions, answered, observationTemplate, templateVars);
}

/** A model config as template variables: everything but a scripted model's (long) `outputs`. */
export function configVars(config: { outputs?: unknown }): Record<string, unknown> {
  const { outputs: _outputs, ...rest } = config;
  return rest;
}
