import { FormatError } from "../errors.js";
import {
  type Action,
  actionsOf,
  type ExecOutput,
  type Message,
  type ObservationExtra,
  type ObservationMessage,
  type UserMessage,
} from "../messages.js";
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

/**
 * The FormatError for a malformed response, as mini-swe-agent builds it: one user message holding the
 * rendered `format_error_template` (with only the variables given here) and `extra.interrupt_type`.
 * The model adds the call's cost and response to `extra`; the bad reply itself is not a message.
 */
export function formatError(
  template: string,
  vars: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): FormatError {
  const content = renderTemplate(template, vars, "format_error_template");
  return new FormatError({ role: "user", content, extra: { interrupt_type: "FormatError", ...extra } });
}

/**
 * Text-based actions: exactly one match of `actionRegex` (its first group, stripped) in the content,
 * else a FormatError whose message keeps the reply in `extra.model_response`.
 */
export function parseTextActions(
  content: string,
  actionRegex: string,
  formatErrorTemplate: string,
  finishReason: string | null = null,
): Action[] {
  const actions = findAll(actionRegex, content).map((action) => action.trim());
  if (actions.length !== 1) {
    throw formatError(
      formatErrorTemplate,
      {
        actions,
        error: `Expected exactly 1 action, found ${actions.length}.`,
        finish_reason: finishReason,
      },
      { n_actions: actions.length, model_response: content },
    );
  }
  return actions.map((command) => ({ command }));
}

/** swerun's own facts about a command (kept on the observation message, not shown to the template). */
const SWERUN_OUTPUT_KEYS = new Set(["duration_s", "truncated"]);

/**
 * The `output` an observation template sees: mini-swe-agent's keys (`output`, `returncode`,
 * `exception_info`, and `extra` with `exception_type`/`exception` after an exception), nothing else.
 */
export function templateOutput(output: ExecOutput): Record<string, unknown> {
  const extra = Object.fromEntries(
    Object.entries(output.extra ?? {}).filter(([key]) => !SWERUN_OUTPUT_KEYS.has(key)),
  );
  const shown: Record<string, unknown> = {
    output: output.output,
    returncode: output.returncode,
    exception_info: output.exception_info,
  };
  if (Object.keys(extra).length > 0) shown.extra = extra;
  return shown;
}

function observation(
  output: ExecOutput,
  observationTemplate: string,
  templateVars: Record<string, unknown>,
): UserMessage & ObservationMessage {
  const content = renderTemplate(
    observationTemplate,
    { ...templateVars, output: templateOutput(output) },
    "observation_template",
  );
  const extra: ObservationExtra = {
    raw_output: output.output,
    returncode: output.returncode,
    timestamp: Date.now() / 1000,
    exception_info: output.exception_info,
    ...(output.extra ?? {}),
  };
  return { role: "user", content, extra };
}

/** Text-based models: one user message per output, as mini-swe-agent's text models write them. */
export function textObservations(
  outputs: ExecOutput[],
  observationTemplate: string,
  templateVars: Record<string, unknown>,
): ObservationMessage[] {
  return outputs.map((output) => observation(output, observationTemplate, templateVars));
}

/**
 * Tool-call models: one message per output. An action from a tool call is answered with `role: "tool"`
 * and its `tool_call_id`, any other (a human's command, a text action) as the user. When the message has
 * tool calls, actions that did not run (a command submitted or the run stopped part-way) are answered as
 * not executed, as mini-swe-agent does, since chat APIs reject a conversation with an unanswered tool call.
 */
export function observationsFor(
  message: Message,
  outputs: ExecOutput[],
  observationTemplate: string,
  templateVars: Record<string, unknown>,
): ObservationMessage[] {
  const actions = actionsOf(message);
  const answered = [...outputs];
  const toolCalls = actions.some((action) => action.tool_call_id);
  while (toolCalls && answered.length < actions.length) {
    answered.push({ output: "", returncode: -1, exception_info: "action was not executed" });
  }
  return answered.map((output, index) => {
    const base = observation(output, observationTemplate, templateVars);
    const toolCallId = actions[index]?.tool_call_id;
    return toolCallId
      ? { content: base.content, extra: base.extra, tool_call_id: toolCallId, role: "tool" }
      : base;
  });
}

/** A model config as a trajectory records it for a stand-in model: everything but a scripted model's `outputs`. */
export function configVars(config: { outputs?: unknown }): Record<string, unknown> {
  const { outputs: _outputs, ...rest } = config;
  return rest;
}
