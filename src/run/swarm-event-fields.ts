import type { AgentEvent } from "../events.js";
import { callTokens, totalTokens } from "../facts/run-facts.js";
import type { Action, Message } from "../messages.js";
import { ModelRequestError, ModelRetriesExhaustedError } from "../models/model-errors.js";
import { preciseNowMs } from "../util/clock.js";

// What SwarmEventStream writes for an agent event that needs nothing from the swarm's state: the event's own
// fields in SwarmSDK's shape, and the text of the messages it reports.

type Event<T extends AgentEvent["type"]> = Extract<AgentEvent, { type: T }>;

/** UTC ISO 8601 with microseconds, as SwarmSDK writes its timestamps: `2026-11-23T09:31:02.123456Z`. */
export function isoTimestamp(ms = preciseNowMs()): string {
  const whole = Math.floor(ms);
  const micros = Math.min(999, Math.floor((ms - whole) * 1000));
  return `${new Date(whole).toISOString().slice(0, -1)}${String(micros).padStart(3, "0")}Z`;
}

export function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => (part as { text?: unknown })?.text ?? "").join("");
  return content == null ? "" : JSON.stringify(content);
}

/**
 * The reply a format error's feedback keeps (as mini-swe-agent, swerun records no assistant message for a
 * reply that could not be run): its text and raw response, as an assistant message.
 */
export function formatErrorReply(message: Message): Message | undefined {
  const extra = message.extra ?? {};
  if (extra.interrupt_type !== "FormatError" || extra.response === undefined) return undefined;
  const choices = (extra.response as { choices?: Array<{ message?: { content?: unknown } }> } | null)
    ?.choices;
  const content =
    typeof extra.model_response === "string" ? extra.model_response : choices?.[0]?.message?.content;
  return {
    role: "assistant",
    content: typeof content === "string" ? content : "",
    extra: { response: extra.response },
  };
}

export function finishReason(message: Message): string | undefined {
  const extra = message.extra ?? {};
  const choices = (extra.response as { choices?: Array<{ finish_reason?: unknown }> } | undefined)?.choices;
  const reason = choices?.[0]?.finish_reason ?? extra.finish_reason;
  return typeof reason === "string" ? reason : undefined;
}

/** The class name of an error (`ModelRetriesExhaustedError`), else its type. */
function errorClass(error: unknown): string {
  return error instanceof Error ? error.constructor.name : typeof error;
}

/**
 * The event an error that ended the swarm stands for: `llm_retry_exhausted` for exhausted retries,
 * `llm_request_failed` for a model request refused for good, `internal_error` for anything else.
 */
export function errorEvent(error: unknown, model: string | undefined): [string, Record<string, unknown>] {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof ModelRetriesExhaustedError) {
    return [
      "llm_retry_exhausted",
      { model, attempts: error.attempts, error_class: error.errorClass, error_message: message },
    ];
  }
  if (error instanceof ModelRequestError) {
    return [
      "llm_request_failed",
      {
        model,
        error_type: errorClass(error).replace(/^Model|Error$/g, ""),
        error_class: errorClass(error),
        error_message: message,
        status_code: error.status,
        retryable: false,
      },
    ];
  }
  return [
    "internal_error",
    { source: "swerun", context: "run", error_class: errorClass(error), error_message: message },
  ];
}

/** `llm_retry_attempt`'s fields. */
export function retryFields(event: Event<"model_retry">, model: string): Record<string, unknown> {
  return {
    model,
    attempt: event.attempt,
    max_retries: event.max_retries,
    error_class: event.error_class,
    error_message: event.error,
    retry_delay: event.delay_s,
  };
}

/** `llm_retry_exhausted`'s fields. */
export function retryExhaustedFields(
  event: Event<"model_retry_exhausted">,
  model: string,
): Record<string, unknown> {
  return { model, attempts: event.attempts, error_class: event.error_class, error_message: event.error };
}

/** `tool_call`'s fields, for the tool call `id`. */
export function toolCallFields(event: Event<"action_start">, id: string): Record<string, unknown> {
  return {
    tool_call_id: id,
    tool: "bash",
    arguments: { command: event.action.command },
    metadata: { step: event.step },
  };
}

/** `tool_result`'s fields, for the tool call `id`. */
export function toolResultFields(event: Event<"action_end">, id: string): Record<string, unknown> {
  return {
    tool_call_id: id,
    tool: "bash",
    result: event.output,
    metadata: {
      step: event.step,
      returncode: event.returncode,
      duration: Math.round(event.duration_s * 1e6) / 1e6,
      exception_info: event.exception_info,
    },
  };
}

/** `llm_api_response`'s fields: the response body and what SwarmSDK reads from it. */
export function apiResponseFields(event: Event<"model_response">): Record<string, unknown> {
  const body = event.body;
  const usage = callTokens(body.usage);
  const choices = Array.isArray(body.choices) ? (body.choices as Array<{ finish_reason?: unknown }>) : [];
  const reason = choices[0]?.finish_reason;
  return {
    provider: event.provider,
    body,
    duration_seconds: Math.round(event.duration_s * 1000) / 1000,
    usage: usage
      ? { input_tokens: usage.input, output_tokens: usage.completion, total_tokens: totalTokens(usage) }
      : undefined,
    model: typeof body.model === "string" ? body.model : undefined,
    finish_reason: typeof reason === "string" ? reason : undefined,
    attempt: event.attempt,
  };
}

/** The id of each action's tool call: the one the model gave it, else `call_<n>`, numbered in order. */
export class ToolCallIds {
  readonly #ids = new WeakMap<Action, string>();
  #next = 0;

  of(action: Action): string {
    let id = this.#ids.get(action) ?? action.tool_call_id;
    if (!id) {
      this.#next += 1;
      id = `call_${this.#next}`;
    }
    this.#ids.set(action, id);
    return id;
  }
}
