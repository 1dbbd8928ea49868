import type { ExecOutput, Message } from "../messages.js";
import { observationsFor } from "./text-actions.js";

type Json = Record<string, unknown>;

/** A user message in the Responses API's typed shape (`input_text` parts). */
export function typedMessage(role: string, content: unknown, extra?: Json): Json {
  const parts = typeof content === "string" ? [{ type: "input_text", text: content }] : content;
  return { type: "message", role, content: parts, ...(extra ? { extra } : {}) };
}

/**
 * A prompt, feedback or exit message as the OpenRouter, Portkey and scripted Responses classes send it: typed
 * `input_text` parts; an item that already has its type (an observation, a response) stays as it is.
 */
export function typedPrompt(message: Message): Message {
  if (typeof message.type === "string" || message.object === "response") return message;
  return typedMessage(message.role, message.content, message.extra) as Message;
}

/**
 * The observations of a Responses API reply, as mini-swe-agent records them: each output of a tool call as a
 * `function_call_output` item (swerun adds `role: "tool"`, left out when sent), any other as a typed user message.
 */
export function responsesObservations(
  message: Message,
  outputs: ExecOutput[],
  observationTemplate: string,
  templateVars: Json,
): Message[] {
  return observationsFor(message, outputs, observationTemplate, templateVars).map(
    (observation): Message =>
      observation.role === "tool"
        ? {
            extra: observation.extra,
            type: "function_call_output",
            call_id: observation.tool_call_id,
            output: observation.content,
            role: "tool",
          }
        : (typedMessage("user", observation.content, observation.extra) as Message),
  );
}
