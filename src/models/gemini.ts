import type { ModelConfig } from "../config/schema.js";
import type { AgentEvent } from "../events.js";
import type { Message } from "../messages.js";
import { registerCredentialEntries } from "../util/secrets.js";
import { ChatModel, extraHeaders, publicConfig } from "./chat-model.js";
import {
  callArguments,
  GEMINI_TOOLS,
  geminiContents,
  geminiRequestFields,
  toolCallId,
} from "./gemini-request.js";
import type { Endpoint } from "./providers.js";
import { cappedFetch } from "./reply-cap.js";

type Json = Record<string, unknown>;

/** An HTTP error answer, shaped as the SDKs' errors are (status, headers, parsed body) for retry.ts. */
class GeminiHttpError extends Error {
  readonly status: number;
  readonly headers: Headers;
  readonly error: unknown;
  constructor(status: number, headers: Headers, body: unknown) {
    const message = (body as { error?: { message?: unknown } } | undefined)?.error?.message;
    super(typeof message === "string" ? message : `HTTP ${status}`);
    this.status = status;
    this.headers = headers;
    this.error = body;
  }
}

/** The server could not be reached (named as the SDKs name theirs, so that it is retried). */
class APIConnectionError extends Error {}

/** Where Vertex AI's generateContent answers for a model, and the headers that authorize a call. */
export interface GeminiTarget {
  url: string;
  authHeaders: () => Promise<Headers>;
}

/** litellm's finish_reason of a Gemini candidate. */
function finishReason(reason: unknown, hasCalls: boolean): string {
  if (reason === "MAX_TOKENS") return "length";
  if (["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII"].includes(String(reason)))
    return "content_filter";
  return hasCalls ? "tool_calls" : "stop";
}

/** litellm's usage of a Gemini reply: thought tokens are completion (and reasoning) tokens; cached reads apart. */
function usageOf(metadata: Json): Json {
  const prompt = Number(metadata.promptTokenCount ?? 0);
  const candidates = Number(metadata.candidatesTokenCount ?? 0);
  const thoughts = Number(metadata.thoughtsTokenCount ?? 0);
  const cached = Number(metadata.cachedContentTokenCount ?? 0);
  return {
    completion_tokens: candidates + thoughts,
    prompt_tokens: prompt,
    total_tokens: Number(metadata.totalTokenCount ?? prompt + candidates + thoughts),
    completion_tokens_details: {
      ...(thoughts ? { reasoning_tokens: thoughts } : {}),
      text_tokens: candidates,
    },
    prompt_tokens_details: cached ? { cached_tokens: cached } : {},
    ...(cached ? { cache_read_input_tokens: cached } : {}),
  };
}

/** A generateContent reply as litellm gives it: a chat completion (text, tool calls, thinking, usage). */
export function geminiChatCompletion(raw: Json): Json {
  const candidate = ((raw.candidates as Json[] | undefined) ?? [])[0];
  if (!candidate) return { ...raw, choices: [] };
  const parts = ((candidate.content as { parts?: Json[] } | undefined)?.parts ?? []) as Json[];
  const thoughts = parts.filter((part) => part.thought === true && typeof part.text === "string");
  const text = parts
    .filter((part) => part.thought !== true && typeof part.text === "string")
    .map((p) => p.text)
    .join("");
  const signatures: string[] = [];
  const toolCalls = parts
    .filter((part) => part.functionCall)
    .map((part, index) => {
      const call = part.functionCall as { name?: string; args?: unknown };
      const signature = typeof part.thoughtSignature === "string" ? part.thoughtSignature : undefined;
      if (signature) signatures.push(signature);
      return {
        index,
        ...(signature ? { provider_specific_fields: { thought_signature: signature } } : {}),
        function: { arguments: callArguments(call.args), name: call.name ?? "" },
        id: toolCallId(signature),
        type: "function",
      };
    });
  const message: Json = {
    content: text || null,
    role: "assistant",
    tool_calls: toolCalls.length > 0 ? toolCalls : null,
    images: [],
    ...(thoughts.length > 0 ? { reasoning_content: thoughts.map((part) => part.text).join("") } : {}),
    thinking_blocks: thoughts.map((part) => ({ type: "thinking", thinking: part.text })),
    ...(signatures.length > 0 ? { provider_specific_fields: { thought_signatures: signatures } } : {}),
  };
  return {
    id: raw.responseId,
    created: Math.floor(Date.now() / 1000),
    model: raw.modelVersion,
    object: "chat.completion",
    choices: [
      { finish_reason: finishReason(candidate.finishReason, toolCalls.length > 0), index: 0, message },
    ],
    usage: usageOf((raw.usageMetadata as Json | undefined) ?? {}),
  };
}

/**
 * A Gemini model on Vertex AI (`vertex_ai/gemini-...`): generateContent on the model's publisher path, with an
 * access token from the application-default credentials, the request shaped as litellm shapes it (see
 * gemini-request.ts) and the reply turned into the chat-completion shape litellm records.
 */
export class GeminiModel extends ChatModel {
  readonly #target: GeminiTarget;
  readonly #fields: Json;
  readonly #fetch = cappedFetch();

  constructor(
    config: ModelConfig,
    endpoint: Endpoint,
    target: GeminiTarget,
    options: { emit?: (event: AgentEvent) => void; textBased: boolean },
  ) {
    super(config, {
      endpoint,
      textBased: options.textBased,
      emit: options.emit,
      keySource: "Google application-default credentials",
      publicConfig: publicConfig(config),
    });
    this.#target = target;
    this.#fields = {
      ...(options.textBased ? {} : { tools: GEMINI_TOOLS }),
      ...geminiRequestFields(config, endpoint.model),
    };
    registerCredentialEntries(extraHeaders(config));
  }

  /** The chat fields ChatModel sends, and the thinking blocks litellm sends back to Gemini as thought parts. */
  protected override outgoing(messages: Message[]): Json[] {
    const kept = messages.filter((message) => message.role !== "exit");
    return super.outgoing(messages).map((message, index) => {
      const blocks = kept[index]?.thinking_blocks;
      return Array.isArray(blocks) ? { ...message, thinking_blocks: blocks } : message;
    });
  }

  protected requestBody(messages: Json[]): Json {
    return { ...geminiContents(messages), ...this.#fields };
  }

  protected async post(body: Json, signal: AbortSignal): Promise<Json> {
    const headers = await this.#target.authHeaders();
    headers.set("content-type", "application/json");
    for (const [name, value] of Object.entries(extraHeaders(this.config))) headers.set(name, value);
    let response: Response;
    try {
      response = await this.#fetch(this.#target.url, {
        method: "POST",
        headers,
        body: JSON.stringify(body),
        signal,
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new APIConnectionError((error as Error).message, { cause: (error as Error).cause });
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      if (response.ok) throw error;
      parsed = { error: { message: text.slice(0, 400) } };
    }
    if (!response.ok) throw new GeminiHttpError(response.status, response.headers, parsed);
    return parsed as Json;
  }

  protected override chatCompletion(raw: Json): Json {
    return geminiChatCompletion(raw);
  }
}
