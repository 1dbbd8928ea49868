import type OpenAI from "openai";
import { formatErrorTemplate } from "../config/model.js";
import type { ModelConfig } from "../config/schema.js";
import { FormatError } from "../errors.js";
import type { AgentEvent } from "../events.js";
import type { ExecOutput, Message } from "../messages.js";
import { publicConfig, requestTimeoutS } from "./chat-model.js";
import { CLIENT_KWARGS } from "./client-kwargs.js";
import { checkPriceKnown, type PricingOptions, pricingOf, responseCost } from "./cost.js";
import { globalModelStats } from "./global-stats.js";
import type { Model, QueryOptions } from "./model.js";
import { MODEL_TYPES } from "./model-types.js";
import { expandMessage } from "./multimodal.js";
import { type ChatClientSettings, openAIClient } from "./openai.js";
import type { Endpoint } from "./providers.js";
import { responsesObservations, typedMessage, typedPrompt } from "./responses-items.js";
import type { ErrorContext } from "./retry.js";
import { requestWithRetries } from "./retrying-request.js";
import { BASH_TOOL, parseToolCallActions } from "./toolcall-actions.js";

type Json = Record<string, unknown>;

/** The bash tool in the Responses API's flat shape (no nested `function`), as mini-swe-agent sends it. */
export const RESPONSES_BASH_TOOL = { type: "function", ...BASH_TOOL.function } as const;

/** model_kwargs that configure the client rather than the request body. */
const NOT_SENT = new Set<string>(CLIENT_KWARGS);

/** mini-swe-agent's `finish_reason` of a Responses API reply: `length` when it stopped at max_output_tokens. */
function finishReason(response: Json): string | null {
  const status = typeof response.status === "string" ? response.status : null;
  if (status !== "incomplete") return status;
  const reason = (response.incomplete_details as { reason?: unknown } | null | undefined)?.reason;
  return reason === "max_output_tokens" ? "length" : status;
}

/**
 * A model behind OpenAI's Responses API (mini-swe-agent's LitellmResponseModel, OpenRouterResponseModel and
 * PortkeyResponseAPIModel): each call sends the whole conversation statelessly, the earlier replies flattened
 * into their output items (reasoning items with their `encrypted_content` included); a reply is recorded as
 * the response object itself, its `function_call` items are the actions, and each output goes back as a
 * `function_call_output`.
 */
export class ResponsesModel implements Model {
  readonly name: string;
  readonly config: ModelConfig;
  readonly endpoint: Endpoint;
  readonly #client: OpenAI;
  readonly #body: Json;
  readonly #typedMessages: boolean;
  readonly #emit: ((event: AgentEvent) => void) | undefined;
  readonly #pricing: PricingOptions;
  readonly #errors: ErrorContext;
  readonly #public: Json;

  /** Refuses a model without a known price (UnknownPriceError) before its first (paid) call. */
  async checkPrice(): Promise<void> {
    await checkPriceKnown(this.#pricing);
  }

  constructor(
    config: ModelConfig,
    endpoint: Endpoint,
    key: { value: string; source: string } | undefined,
    options: { emit?: (event: AgentEvent) => void; client?: ChatClientSettings },
  ) {
    this.config = config;
    this.name = config.model_name;
    this.endpoint = endpoint;
    this.#emit = options.emit;
    this.#client = openAIClient(config, endpoint, key, options.client);
    // LitellmResponseModel sends prompts as chat messages; the OpenRouter and Portkey classes as typed messages.
    this.#typedMessages = config.model_class !== "litellm_response" && config.model_class !== "responses";
    const kwargs = config.model_kwargs;
    const body = Object.fromEntries(Object.entries(kwargs).filter(([name]) => !NOT_SENT.has(name)));
    this.#body = { ...body, ...(typeof kwargs.extra_body === "object" ? kwargs.extra_body : {}) };
    this.#pricing = pricingOf(config, endpoint);
    this.#errors = {
      model: endpoint.model,
      baseURL: endpoint.baseURL,
      keyVar: endpoint.info.keyVars[0] ?? "the API key",
      keySource: key?.source,
    };
    this.#public = publicConfig(config);
  }

  /** The input items: earlier replies flattened into their output items, swerun's own fields left out. */
  #input(messages: Message[]): Json[] {
    const input: Json[] = [];
    for (const message of messages) {
      if (message.role === "exit") continue;
      if (message.object === "response") {
        for (const item of (message.output as Json[] | undefined) ?? []) {
          const { extra: _extra, ...fields } = item;
          input.push(fields);
        }
        continue;
      }
      const { extra: _extra, ...fields } = message as Json;
      // swerun gives every message a role; a function_call_output item has none in the API.
      if (fields.type === "function_call_output") delete fields.role;
      input.push(fields);
    }
    return input;
  }

  async query(messages: Message[], options: QueryOptions = {}): Promise<Message> {
    const stats = globalModelStats();
    stats.checkBeforeCall();
    const body = {
      ...this.#body,
      model: this.endpoint.model,
      input: this.#input(messages),
      tools: [RESPONSES_BASH_TOOL],
    };
    const provider = this.endpoint.provider;
    const { response, durationS, retries } = await requestWithRetries(
      async (attempt, signal) => {
        this.#emit?.({ type: "model_request", attempt, provider, body, time: Date.now() / 1000 });
        const started = process.hrtime.bigint();
        const reply = (await this.#client.post("/responses", { body, signal })) as Json;
        const duration = Number(process.hrtime.bigint() - started) / 1e9;
        this.#emit?.({
          type: "model_response",
          attempt,
          provider,
          body: reply,
          duration_s: duration,
          time: Date.now() / 1000,
        });
        return reply;
      },
      this.config,
      {
        signal: options.signal,
        errors: this.#errors,
        timeoutS: requestTimeoutS(this.config),
        emit: this.#emit,
      },
    );
    const { cost } = await responseCost(response, this.#pricing);
    stats.add(cost);
    const extra = {
      cost,
      timestamp: Date.now() / 1000,
      duration_s: durationS,
      ...(retries.length > 0 ? { retries } : {}),
    };
    const actions = this.#parseActions(response, extra);
    // The response object is the message, as mini-swe-agent records it; swerun adds the role its readers use.
    return { ...response, role: "assistant", extra: { actions, ...extra } };
  }

  /** The reply's function calls as actions, as mini-swe-agent parses them; a FormatError's message is typed. */
  #parseActions(response: Json, paid: Json) {
    const output = Array.isArray(response.output) ? (response.output as Json[]) : [];
    const calls = output
      .filter((item) => item.type === "function_call")
      .map((item) => ({
        id: item.call_id ?? item.id,
        function: { name: item.name, arguments: item.arguments ?? "{}" },
      }));
    try {
      return parseToolCallActions(calls, formatErrorTemplate(this.config), finishReason(response));
    } catch (error) {
      const feedback = error instanceof FormatError ? error.messages[0] : undefined;
      if (feedback && error instanceof FormatError) {
        error.messages[0] = typedMessage("user", feedback.content, {
          ...feedback.extra,
          ...paid,
          response,
        }) as Message;
      }
      throw error;
    }
  }

  formatObservations(message: Message, outputs: ExecOutput[], templateVars: Json): Message[] {
    return responsesObservations(message, outputs, this.config.observation_template, templateVars);
  }

  formatMessage(message: Message): Message {
    if (!this.#typedMessages) return expandMessage(message, this.config.multimodal_regex);
    return typedPrompt(message);
  }

  templateVars(): Json {
    return structuredClone(this.#public);
  }

  serialize() {
    return { model: structuredClone(this.#public), model_type: MODEL_TYPES[this.config.model_class] };
  }
}
