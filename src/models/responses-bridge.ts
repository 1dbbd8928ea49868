/**
 * OpenAI's Responses-only models (gpt-5-codex, the -pro and deep-research models) behind mini-swe-agent's
 * default (chat-completions) classes, as litellm bridges them: the chat messages become Responses API input
 * items (an assistant message's reasoning items, with their `encrypted_content`, go back first), and the reply
 * comes back as a chat completion whose message keeps its reasoning items (`reasoning_items`).
 */
import type OpenAI from "openai";
import type { ModelConfig } from "../config/schema.js";
import type { Message } from "../messages.js";
import { ChatModel, type ChatModelOptions } from "./chat-model.js";
import { CLIENT_KWARGS } from "./client-kwargs.js";
import { BASH_TOOL } from "./toolcall-actions.js";

type Json = Record<string, unknown>;

/** Models OpenAI serves only on its Responses API (litellm's `mode: responses`). */
export function isResponsesOnly(model: string): boolean {
  return /codex|deep-research|-pro(-\d{4}-\d{2}-\d{2})?$/.test(model);
}

/** Chat parameters the Responses API names differently: max_tokens, reasoning_effort. */
function parameters(kwargs: Json): Json {
  const { max_tokens, max_completion_tokens, reasoning_effort, ...body } = kwargs;
  const max = max_tokens ?? max_completion_tokens;
  if (max !== undefined) body.max_output_tokens = max;
  if (reasoning_effort !== undefined)
    body.reasoning = { ...(body.reasoning as Json | undefined), effort: reasoning_effort };
  return body;
}

function inputText(content: unknown): Json[] {
  if (typeof content === "string") return [{ type: "input_text", text: content }];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part: Json): Json[] => {
    if (part?.type === "text") return [{ type: "input_text", text: part.text }];
    if (part?.type === "image_url") {
      const image = part.image_url as { url?: unknown } | string;
      return [{ type: "input_image", image_url: typeof image === "string" ? image : image?.url }];
    }
    return [];
  });
}

/** The chat messages as Responses API input items, as litellm converts them. */
export function responsesInput(messages: readonly Json[]): Json[] {
  const input: Json[] = [];
  for (const message of messages) {
    if (message.role === "tool") {
      input.push({
        type: "function_call_output",
        call_id: message.tool_call_id,
        output: inputText(message.content),
      });
      continue;
    }
    if (message.role !== "assistant") {
      input.push({ type: "message", role: message.role, content: inputText(message.content) });
      continue;
    }
    for (const item of (message.reasoning_items as Json[] | undefined) ?? []) input.push(item);
    if (typeof message.content === "string" && message.content)
      input.push({
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: message.content }],
      });
    for (const call of (message.tool_calls as Json[] | undefined) ?? []) {
      const fn = call.function as Json;
      input.push({ type: "function_call", call_id: call.id, name: fn.name, arguments: fn.arguments });
    }
  }
  return input;
}

/** A Responses API reply as the chat completion litellm makes of it. */
export function bridgedCompletion(response: Json): Json {
  const output = (response.output as Json[] | undefined) ?? [];
  const text = output
    .filter((item) => item.type === "message")
    .flatMap((item) => (item.content as Json[] | undefined) ?? [])
    .filter((part) => part.type === "output_text")
    .map((part) => part.text)
    .join("");
  const calls = output.filter((item) => item.type === "function_call");
  const reasoning = output.filter((item) => item.type === "reasoning");
  const message: Json = {
    content: text || null,
    role: "assistant",
    tool_calls:
      calls.length > 0
        ? calls.map((call, index) => ({
            index,
            function: { arguments: call.arguments, name: call.name },
            id: call.call_id,
            type: "function",
          }))
        : null,
    function_call: null,
  };
  if (reasoning.length > 0) {
    message.reasoning_content = reasoning
      .flatMap((item) => (item.summary as Json[] | undefined) ?? [])
      .map((part) => part.text)
      .join("");
    message.reasoning_items = reasoning.map(({ status: _status, ...item }) => item);
  }
  const usage = (response.usage as Json | undefined) ?? {};
  const incomplete = response.status === "incomplete";
  return {
    id: response.id,
    created: response.created_at,
    model: response.model,
    object: "chat.completion",
    choices: [
      { finish_reason: incomplete ? "length" : calls.length > 0 ? "tool_calls" : "stop", index: 0, message },
    ],
    usage: {
      completion_tokens: usage.output_tokens,
      prompt_tokens: usage.input_tokens,
      total_tokens: usage.total_tokens,
      completion_tokens_details: usage.output_tokens_details,
      prompt_tokens_details: usage.input_tokens_details,
    },
  };
}

/** model_kwargs that configure the client rather than the request body. */
const NOT_SENT = new Set<string>([...CLIENT_KWARGS, "api_version"]);

/** A Responses-only model behind a chat-completions class (mini-swe-agent's LitellmModel, litellm's bridge). */
export class ResponsesBridgeModel extends ChatModel {
  readonly #client: OpenAI;
  readonly #body: Json;

  constructor(config: ModelConfig, client: OpenAI, options: ChatModelOptions) {
    super(config, options);
    this.#client = client;
    const kwargs = config.model_kwargs;
    const sent = Object.fromEntries(Object.entries(kwargs).filter(([name]) => !NOT_SENT.has(name)));
    this.#body = { ...parameters(sent), ...(typeof kwargs.extra_body === "object" ? kwargs.extra_body : {}) };
  }

  /** The chat messages with the reasoning items of earlier replies, which go back as input items. */
  protected override outgoing(messages: Message[]): Json[] {
    const chat = super.outgoing(messages);
    let at = 0;
    for (const message of messages) {
      if (message.role === "exit") continue;
      const items = message.reasoning_items;
      if (Array.isArray(items) && chat[at]) (chat[at] as Json).reasoning_items = items;
      at++;
    }
    return chat;
  }

  protected requestBody(messages: Json[]): Json {
    const tools = this.textBased ? {} : { tools: [{ type: "function", ...BASH_TOOL.function }] };
    return { ...this.#body, model: this.endpoint.model, input: responsesInput(messages), ...tools };
  }

  protected async post(body: Json, signal: AbortSignal): Promise<Json> {
    return (await this.#client.post("/responses", { body, signal })) as Json;
  }

  protected override chatCompletion(raw: Json): Json {
    return bridgedCompletion(raw);
  }
}
