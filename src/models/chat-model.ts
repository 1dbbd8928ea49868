import { formatErrorTemplate } from "../config/model.js";
import type { ModelConfig } from "../config/schema.js";
import { FormatError } from "../errors.js";
import type { AgentEvent } from "../events.js";
import type { ExecOutput, Message, MessageContent } from "../messages.js";
import { isCredentialName, redact } from "../util/secrets.js";
import { setCacheControl } from "./cache-control.js";
import { checkPriceKnown, type PricingOptions, pricingOf, responseCost } from "./cost.js";
import { globalModelStats } from "./global-stats.js";
import type { Model, QueryOptions } from "./model.js";
import { MODEL_TYPES } from "./model-types.js";
import { expandMessage } from "./multimodal.js";
import type { Endpoint } from "./providers.js";
import { type ErrorContext, TransientModelError } from "./retry.js";
import { requestWithRetries } from "./retrying-request.js";
import { observationsFor, parseTextActions, textObservations } from "./text-actions.js";
import { parseToolCallActions } from "./toolcall-actions.js";

type Json = Record<string, unknown>;

/** Message fields a chat-completions endpoint takes; everything else (`extra`, response-only fields) stays in the trajectory. */
const CHAT_FIELDS = [
  "role",
  "content",
  "name",
  "tool_calls",
  "tool_call_id",
  "reasoning_content",
  "reasoning_details",
];

function stringRecord(value: unknown): Record<string, string> {
  if (typeof value !== "object" || value === null) return {};
  return Object.fromEntries(
    Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
}

/** model_kwargs.extra_headers as HTTP headers (string values only). */
export function extraHeaders(config: ModelConfig): Record<string, string> {
  return stringRecord(config.model_kwargs.extra_headers);
}

/** The request timeout in seconds: litellm's `model_kwargs.timeout` when given, else `request_timeout`. */
export function requestTimeoutS(config: ModelConfig): number {
  const timeout = config.model_kwargs.timeout;
  return typeof timeout === "number" && timeout > 0 ? timeout : config.request_timeout;
}

/** The config as recorded and shown to templates: no api_key or token, no secret-looking headers, no key anywhere. */
export function publicConfig(config: ModelConfig): Json {
  const { api_key: _key, azure_ad_token: _token, extra_headers, ...kwargs } = config.model_kwargs;
  const headers = Object.fromEntries(
    Object.entries(stringRecord(extra_headers)).filter(([name]) => !isCredentialName(name)),
  );
  const model_kwargs = extra_headers === undefined ? kwargs : { ...kwargs, extra_headers: headers };
  return JSON.parse(redact(JSON.stringify({ ...config, model_kwargs }))) as Json;
}

/** What a chat model needs besides its config: where it sends, its events, and how its key was found. */
export interface ChatModelOptions {
  endpoint: Endpoint;
  textBased: boolean;
  emit?: (event: AgentEvent) => void;
  /** Where the key in use came from, for error messages. */
  keySource?: string;
  /** The config as recorded (see publicConfig). */
  publicConfig: Json;
}

/**
 * A model that answers in the chat-completions shape, with tool-call or text-based actions (mini-swe-agent's
 * LitellmModel and LitellmTextbasedModel): one call sends the conversation (with retries), prices the reply,
 * and turns it into actions. Each protocol (OpenAI's chat completions, Anthropic's Messages API) is a subclass
 * that builds its request body, sends it, and gives the reply in the chat-completion shape, as litellm does.
 */
export abstract class ChatModel implements Model {
  readonly name: string;
  /** The config with the model name and cache-control default resolved. */
  readonly config: ModelConfig;
  readonly endpoint: Endpoint;
  protected readonly textBased: boolean;
  protected readonly emit: ((event: AgentEvent) => void) | undefined;
  protected readonly timeoutS: number;
  readonly #pricing: PricingOptions;
  readonly #errors: ErrorContext;
  readonly #public: Json;

  /** Refuses a model without a known price (UnknownPriceError) before its first (paid) call. */
  async checkPrice(): Promise<void> {
    await checkPriceKnown(this.#pricing);
  }

  protected constructor(config: ModelConfig, options: ChatModelOptions) {
    this.config = config;
    this.name = config.model_name;
    this.endpoint = options.endpoint;
    this.textBased = options.textBased;
    this.emit = options.emit;
    this.timeoutS = requestTimeoutS(config);
    const endpoint = options.endpoint;
    this.#pricing = pricingOf(config, endpoint);
    this.#errors = {
      model: endpoint.model,
      baseURL: endpoint.baseURL,
      keyVar: endpoint.info.keyVars[0] ?? "the API key",
      keySource: options.keySource,
    };
    this.#public = options.publicConfig;
  }

  /** The request body of one call (the same for every attempt). */
  protected abstract requestBody(messages: Json[]): Json;
  /** One attempt: sends `body` and returns the provider's response as it came. */
  protected abstract post(body: Json, signal: AbortSignal): Promise<Json>;
  /** The provider's response in the chat-completion shape (the identity for chat-completions endpoints). */
  protected chatCompletion(raw: Json): Json {
    return raw;
  }

  /** The messages as sent: the exit message left out, only the fields the API takes, cache control marked. */
  protected outgoing(messages: Message[]): Json[] {
    const outgoing = messages
      .filter((message) => message.role !== "exit")
      .map((message) =>
        Object.fromEntries(CHAT_FIELDS.filter((f) => message[f] !== undefined).map((f) => [f, message[f]])),
      );
    return this.config.set_cache_control
      ? setCacheControl(outgoing, this.config.set_cache_control)
      : outgoing;
  }

  /** One model call: the messages sent (with retries), the reply as a message, its actions parsed. */
  async query(messages: Message[], options: QueryOptions = {}): Promise<Message> {
    const stats = globalModelStats();
    stats.checkBeforeCall();
    const body = this.requestBody(this.outgoing(messages));
    const { response, durationS, retries } = await requestWithRetries(
      (attempt, signal) => this.#request(body, signal, attempt),
      this.config,
      { signal: options.signal, errors: this.#errors, timeoutS: this.timeoutS, emit: this.emit },
    );
    const { cost } = await responseCost(response, this.#pricing);
    stats.add(cost);
    const choice = (response.choices as Json[])[0] ?? {};
    const finishReason = typeof choice.finish_reason === "string" ? choice.finish_reason : null;
    const message: Message = {
      ...(choice.message as Json),
      role: "assistant",
      content: (choice.message as { content?: MessageContent } | undefined)?.content ?? null,
      extra: {
        actions: [],
        cost,
        usage: response.usage,
        response,
        duration_s: durationS,
        timestamp: Date.now() / 1000,
        ...(retries.length > 0 ? { retries } : {}),
      },
    };
    this.#parseActions(message, finishReason);
    return message;
  }

  /** One attempt, announced as events; a reply without choices is worth another attempt. */
  async #request(body: Json, signal: AbortSignal, attempt: number): Promise<Json> {
    const provider = this.endpoint.provider;
    this.emit?.({ type: "model_request", attempt, provider, body, time: Date.now() / 1000 });
    const started = process.hrtime.bigint();
    const raw = await this.post(body, signal);
    const durationS = Number(process.hrtime.bigint() - started) / 1e9;
    this.emit?.({
      type: "model_response",
      attempt,
      provider,
      body: raw,
      duration_s: durationS,
      time: Date.now() / 1000,
    });
    const response = this.chatCompletion(raw);
    if (!Array.isArray(response.choices) || response.choices.length === 0) {
      const detail = (response.error as { message?: unknown } | undefined)?.message;
      throw new TransientModelError(
        `the response had no choices${typeof detail === "string" ? `: ${detail}` : ""}`,
      );
    }
    return response;
  }

  /**
   * Sets the reply's `extra.actions` (from its text or its tool calls). A FormatError's feedback message keeps
   * the call's cost and raw response, as mini-swe-agent's does.
   */
  #parseActions(message: Message, finishReason: string | null): void {
    const template = formatErrorTemplate(this.config);
    try {
      const actions = this.textBased
        ? parseTextActions(
            typeof message.content === "string" ? message.content : "",
            this.config.action_regex,
            template,
            finishReason,
          )
        : parseToolCallActions(message.tool_calls, template, finishReason);
      message.extra = { ...message.extra, actions };
    } catch (error) {
      const feedback = error instanceof FormatError ? error.messages[0] : undefined;
      if (feedback) {
        const { actions: _actions, ...paid } = message.extra ?? {};
        feedback.extra = { ...feedback.extra, ...paid };
      }
      throw error;
    }
  }

  formatObservations(message: Message, outputs: ExecOutput[], templateVars: Json): Message[] {
    return this.textBased
      ? textObservations(outputs, this.config.observation_template, templateVars)
      : observationsFor(message, outputs, this.config.observation_template, templateVars);
  }

  formatMessage(message: Message): Message {
    return expandMessage(message, this.config.multimodal_regex);
  }

  templateVars(): Json {
    return structuredClone(this.#public);
  }

  serialize() {
    return { model: structuredClone(this.#public), model_type: MODEL_TYPES[this.config.model_class] };
  }
}
