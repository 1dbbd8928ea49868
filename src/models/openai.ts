import OpenAI from "openai";
import type { SettingsContext } from "../config/keys.js";
import type { ModelConfig } from "../config/schema.js";
import type { AgentEvent } from "../events.js";
import { registerCredential, registerCredentialEntries } from "../util/secrets.js";
import { ChatModel, extraHeaders, publicConfig, requestTimeoutS } from "./chat-model.js";
import { CLIENT_KWARGS } from "./client-kwargs.js";
import {
  configuredModelName,
  type GatewayCall,
  MissingApiKeyError,
  providerCall,
  resolvedConfig,
} from "./model-setup.js";
import type { Endpoint } from "./providers.js";
import { cappedFetch } from "./reply-cap.js";
import { BASH_TOOL } from "./toolcall-actions.js";

export { MissingApiKeyError };

type Json = Record<string, unknown>;

/** model_kwargs that configure the client rather than the request body. */
export const NOT_SENT = new Set<string>([...CLIENT_KWARGS, "api_version", "azure_ad_token"]);

/** How an OpenAI-compatible endpoint is reached: its headers, query and the key header's name. */
export interface ChatClientSettings {
  /** Headers sent with every request besides the config's `extra_headers`. */
  headers?: Record<string, string | null>;
  /** Query parameters of every request (Azure's `api-version`). */
  query?: Record<string, string>;
}

/**
 * The OpenAI client for an endpoint: its base URL and key (none: no Authorization header), no retries of its
 * own, the config's headers (secret ones registered for redaction) and the endpoint's own headers and query.
 */
export function openAIClient(
  config: ModelConfig,
  endpoint: Endpoint,
  key: { value: string; source: string } | undefined,
  client: ChatClientSettings = {},
): OpenAI {
  const headers = extraHeaders(config);
  // Registered secrets are redacted from everything swerun writes: trajectories, logs, events, errors.
  registerCredential(key?.value);
  registerCredentialEntries(headers);
  return new OpenAI({
    baseURL: endpoint.baseURL,
    apiKey: key?.value ?? "no-key",
    // The SDK's own timeout covers only the response headers; the request timeout of a call covers the body too.
    timeout: Math.ceil(requestTimeoutS(config) * 2000),
    maxRetries: 0,
    // A reply's body is read up to MAX_REPLY_BYTES (reply-cap.ts).
    fetch: cappedFetch(),
    // The SDK reads OpenAI's organization and project variables itself; other providers must not get them.
    ...(endpoint.provider === "openai" ? {} : { organization: null, project: null }),
    defaultHeaders: { ...(key ? {} : { Authorization: null }), ...client.headers, ...headers },
    ...(client.query ? { defaultQuery: client.query } : {}),
  });
}

/** A model behind any OpenAI-compatible chat-completions endpoint, with tool-call or text-based actions. */
export class OpenAIModel extends ChatModel {
  readonly #client: OpenAI;
  readonly #body: Json;

  protected constructor(
    config: ModelConfig,
    endpoint: Endpoint,
    key: { value: string; source: string } | undefined,
    options: { emit?: (event: AgentEvent) => void; textBased: boolean; client?: ChatClientSettings },
  ) {
    super(config, {
      endpoint,
      textBased: options.textBased,
      emit: options.emit,
      keySource: key?.source,
      publicConfig: publicConfig(config),
    });
    const kwargs = config.model_kwargs;
    this.#client = openAIClient(config, endpoint, key, options.client);
    const body = Object.fromEntries(Object.entries(kwargs).filter(([name]) => !NOT_SENT.has(name)));
    if (endpoint.provider === "openrouter" && body.usage === undefined) body.usage = { include: true };
    this.#body = { ...body, ...(typeof kwargs.extra_body === "object" ? kwargs.extra_body : {}) };
    if (!options.textBased) this.#body.tools = [BASH_TOOL];
  }

  /**
   * Resolves provider, key and prices for `config.model_name`. Throws UserError subclasses for an unknown
   * provider, a missing key (hosted providers without a custom base URL) or an unreadable price registry.
   */
  static async create(
    config: ModelConfig,
    options: {
      emit?: (event: AgentEvent) => void;
      textBased: boolean;
      settings?: SettingsContext;
      /** A gateway's or cloud's own endpoint, key and headers (gateways.ts, azure.ts); else the provider's. */
      call?: GatewayCall;
    },
  ): Promise<OpenAIModel> {
    const modelName = configuredModelName(config, options.settings);
    const call = options.call ?? providerCall(config, modelName, options.settings);
    const model = new OpenAIModel(resolvedConfig(config, modelName), call.endpoint, call.key, {
      ...options,
      client: { headers: call.headers, ...(call.query ? { query: call.query } : {}) },
    });
    await model.checkPrice(); // a model without a price is refused before its first (paid) call
    return model;
  }

  protected requestBody(messages: Json[]): Json {
    return { ...this.#body, model: this.endpoint.model, messages };
  }

  protected async post(body: Json, signal: AbortSignal): Promise<Json> {
    return (await this.#client.chat.completions.create(
      body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming,
      { signal },
    )) as unknown as Json;
  }
}
