import type Anthropic from "@anthropic-ai/sdk";
import type { SettingsContext } from "../config/keys.js";
import type { ModelConfig } from "../config/schema.js";
import type { AgentEvent } from "../events.js";
import type { Message } from "../messages.js";
import { registerCredential, registerCredentialEntries } from "../util/secrets.js";
import { anthropicBody } from "./anthropic-request.js";
import { chatCompletion } from "./anthropic-response.js";
import { setCacheControl } from "./cache-control.js";
import { ChatModel, extraHeaders, publicConfig, requestTimeoutS } from "./chat-model.js";
import { configuredModelName, lookupKey, MissingApiKeyError, resolvedConfig } from "./model-setup.js";
import { type Endpoint, resolveEndpoint } from "./providers.js";
import { cappedFetch } from "./reply-cap.js";

type Json = Record<string, unknown>;

/**
 * What the three Anthropic clients (the API's, Bedrock's, Vertex's) have in common here: a POST to the Messages
 * API's path, which the clouds' clients rewrite to their own paths and sign. (Not `messages.create`, which
 * also prints a deprecation warning of its own on the console for older models.)
 */
export interface MessagesClient {
  post(path: string, options: { body: unknown; signal: AbortSignal }): PromiseLike<unknown>;
}

/** The API version litellm asks Anthropic for (the SDK's default is newer). */
export const ANTHROPIC_VERSION = "2023-06-01";

/** The client options every Anthropic client gets: no retries of its own, the timeout, the config's headers. */
export function clientOptions(config: ModelConfig, baseURL: string | undefined) {
  return {
    ...(baseURL ? { baseURL } : {}),
    maxRetries: 0,
    // A reply's body is read up to MAX_REPLY_BYTES (reply-cap.ts).
    fetch: cappedFetch(),
    // The SDK's own timeout covers only the response headers; the request timeout of a call covers the body too.
    timeout: Math.ceil(requestTimeoutS(config) * 2000),
    defaultHeaders: extraHeaders(config),
  };
}

/**
 * A Claude model through Anthropic's Messages API (mini-swe-agent's LitellmModel on an `anthropic/`,
 * `bedrock/` or `vertex_ai/` model, as litellm calls it): the conversation is sent as litellm shapes it
 * (anthropic-request.ts) through the official SDK, and the reply is recorded in litellm's chat-completion
 * shape (anthropic-response.ts), thinking blocks and their signatures included, so they go back on the next call.
 */
export class AnthropicModel extends ChatModel {
  readonly #client: MessagesClient;
  readonly #bodyFields: Json;

  constructor(
    config: ModelConfig,
    endpoint: Endpoint,
    client: MessagesClient,
    options: {
      emit?: (event: AgentEvent) => void;
      textBased: boolean;
      keySource?: string;
      /** Fields the cloud's API wants in the body (Bedrock's and Vertex's `anthropic_version`). */
      bodyFields?: Json;
    },
  ) {
    super(config, { ...options, endpoint, publicConfig: publicConfig(config) });
    registerCredentialEntries(extraHeaders(config));
    this.#client = client;
    this.#bodyFields = options.bodyFields ?? {};
  }

  /** An `anthropic/` model on Anthropic's own API; a missing key is an error unless the base URL is custom. */
  static async create(
    config: ModelConfig,
    options: { emit?: (event: AgentEvent) => void; textBased: boolean; settings?: SettingsContext },
  ): Promise<AnthropicModel> {
    const modelName = configuredModelName(config, options.settings);
    const endpoint = resolveEndpoint(modelName, config.model_kwargs, { settings: options.settings });
    const key = lookupKey(config, endpoint.info.keyVars, options.settings);
    if (!key && !endpoint.customBaseURL)
      throw new MissingApiKeyError(modelName, endpoint.info.keyVars[0] ?? "");
    registerCredential(key?.value);
    const { default: AnthropicClient } = await import("@anthropic-ai/sdk");
    const options_ = clientOptions(config, endpoint.baseURL);
    // The key goes in `x-api-key`, as litellm sends it (the SDK would send it as a bearer token).
    const client: Anthropic = new AnthropicClient({
      ...options_,
      apiKey: null,
      authToken: null,
      defaultHeaders: {
        "anthropic-version": ANTHROPIC_VERSION,
        ...(key ? { "x-api-key": key.value } : { Authorization: null }),
        ...options_.defaultHeaders,
      },
    });
    return new AnthropicModel(resolvedConfig(config, modelName), endpoint, client, {
      ...options,
      keySource: key?.source,
    });
  }

  /** The messages as mini-swe-agent hands them to litellm: every field but `extra`, the cache mark set. */
  protected override outgoing(messages: Message[]): Json[] {
    const outgoing = messages
      .filter((message) => message.role !== "exit")
      .map(({ extra: _extra, ...fields }) => fields as Json);
    return this.config.set_cache_control
      ? setCacheControl(outgoing, this.config.set_cache_control)
      : outgoing;
  }

  protected requestBody(messages: Json[]): Json {
    const body = anthropicBody(messages, this.config.model_kwargs, this.endpoint.model, {
      toolCalls: !this.textBased,
    });
    return { ...body, ...this.#bodyFields };
  }

  protected async post(body: Json, signal: AbortSignal): Promise<Json> {
    return (await this.#client.post("/v1/messages", { body, signal })) as Json;
  }

  protected override chatCompletion(raw: Json): Json {
    return chatCompletion(raw);
  }
}
