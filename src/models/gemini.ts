import { type GenerateContentParameters, GoogleGenAI } from "@google/genai";
import type { ModelConfig } from "../config/schema.js";
import type { AgentEvent } from "../events.js";
import type { Message } from "../messages.js";
import { registerCredentialEntries } from "../util/secrets.js";
import { ChatModel, extraHeaders, publicConfig, requestTimeoutS } from "./chat-model.js";
import {
  callArguments,
  GEMINI_TOOLS,
  geminiContents,
  geminiRequestFields,
  toolCallId,
} from "./gemini-request.js";
import type { Endpoint } from "./providers.js";

type Json = Record<string, unknown>;

/** How the model reaches Vertex AI: Google's SDK in Vertex mode, pointed at the project and location. */
export interface GeminiTarget {
  client: GoogleGenAI;
}

/** The server could not be reached. */
class APIConnectionError extends Error {}

/**
 * The SDK's ApiError (its message is the JSON error body) as the errors retry.ts reads: the status, and the
 * body with Google's own message; a connection that failed as one to retry; anything else as it is.
 */
function vertexError(error: unknown): unknown {
  // fetch's "cannot connect" (named as the SDKs name theirs, so that it is retried).
  if (error instanceof TypeError && error.message === "fetch failed")
    return new APIConnectionError(error.message, { cause: error.cause });
  const status = (error as { status?: unknown } | null)?.status;
  if (!(error instanceof Error) || typeof status !== "number") return error;
  let body: unknown;
  try {
    body = JSON.parse(error.message);
  } catch {
    body = { error: { message: error.message } };
  }
  return Object.assign(new Error(error.message), { status, headers: undefined, error: body });
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
 * A Gemini model on Vertex AI (`vertex_ai/gemini-...`) through Google's SDK (`@google/genai`, Vertex mode):
 * generateContent on the model's publisher path with an access token from the application-default
 * credentials, the request shaped as litellm shapes it (see gemini-request.ts) and the reply turned into the
 * chat-completion shape litellm records.
 */
export class GeminiModel extends ChatModel {
  readonly #client: GoogleGenAI;
  readonly #settings: Json;

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
    this.#client = target.client;
    this.#settings = {
      ...(options.textBased ? {} : { tools: GEMINI_TOOLS }),
      ...geminiRequestFields(config, endpoint.model),
    };
  }

  /** The chat fields ChatModel sends, and the thinking blocks litellm sends back to Gemini as thought parts. */
  protected override outgoing(messages: Message[]): Json[] {
    const kept = messages.filter((message) => message.role !== "exit");
    return super.outgoing(messages).map((message, index) => {
      const blocks = kept[index]?.thinking_blocks;
      return Array.isArray(blocks) ? { ...message, thinking_blocks: blocks } : message;
    });
  }

  /** The SDK's generateContent parameters: the model, the turns, and the system prompt, tools and settings. */
  protected requestBody(messages: Json[]): Json {
    const { contents, systemInstruction } = geminiContents(messages);
    return {
      model: this.endpoint.model,
      contents,
      config: { ...(systemInstruction ? { systemInstruction } : {}), ...this.#settings },
    };
  }

  protected async post(body: Json, signal: AbortSignal): Promise<Json> {
    const config = { ...(body.config as Json), abortSignal: signal };
    const params = { ...body, config } as unknown as GenerateContentParameters;
    try {
      const { sdkHttpResponse: _http, ...response } = await this.#client.models.generateContent(params);
      return JSON.parse(JSON.stringify(response)) as Json;
    } catch (error) {
      throw vertexError(error);
    }
  }

  protected override chatCompletion(raw: Json): Json {
    return geminiChatCompletion(raw);
  }
}

/**
 * The Gemini model of a Vertex AI config: Google's SDK in Vertex mode at `place` (its base URL ends in
 * `/v1`, Vertex AI's generally available API, as litellm calls it), authorized by `authClient`; a model
 * without a price is refused before its first (paid) call.
 */
export async function geminiOnVertex(
  config: ModelConfig,
  endpoint: Endpoint,
  place: { project: string; location: string; baseURL: string },
  authClient: unknown,
  context: { emit?: (event: AgentEvent) => void; textBased: boolean },
): Promise<GeminiModel> {
  const headers = extraHeaders(config);
  registerCredentialEntries(headers);
  const client = new GoogleGenAI({
    vertexai: true,
    project: place.project,
    location: place.location,
    googleAuthOptions: { authClient: authClient as never },
    httpOptions: {
      baseUrl: place.baseURL.replace(/\/v1$/, ""),
      apiVersion: "v1",
      timeout: Math.ceil(requestTimeoutS(config) * 1000),
      headers,
    },
  });
  const model = new GeminiModel(config, endpoint, { client }, context);
  await model.checkPrice();
  return model;
}
