import OpenAI from "openai";
import { lookupSetting, type SettingsContext } from "../config/keys.js";
import { formatErrorTemplate } from "../config/model.js";
import type { ModelConfig } from "../config/schema.js";
import { FormatError, UserError } from "../errors.js";
import type { AgentEvent } from "../events.js";
import type { ExecOutput, Message } from "../messages.js";
import { monotonicMs } from "../util/clock.js";
import { isCredentialName, redact, registerCredential, registerCredentialEntries } from "../util/secrets.js";
import { type CacheControlMode, defaultCacheControl, setCacheControl } from "./cache-control.js";
import { checkPriceKnown, loadPriceRegistry, type PricingOptions, responseCost } from "./cost.js";
import { globalModelStats } from "./global-stats.js";
import type { Model, QueryOptions } from "./model.js";
import { MODEL_TYPES } from "./model-types.js";
import { expandMessage } from "./multimodal.js";
import { type Endpoint, resolveEndpoint } from "./providers.js";
import { cappedFetch, replyTooLarge } from "./reply-cap.js";
import {
  classifyError,
  type ErrorContext,
  ModelRetriesExhaustedError,
  type RetryPolicy,
  TransientModelError,
  withRetry,
} from "./retry.js";
import { observationsFor, parseTextActions, textObservations } from "./text-actions.js";
import { BASH_TOOL, parseToolCallActions } from "./toolcall-actions.js";

/** A hosted provider was chosen but no API key was found. */
export class MissingApiKeyError extends UserError {
  constructor(modelName: string, keyVar: string) {
    super(
      `model "${modelName}" needs an API key: set ${keyVar} in the environment, in .env in the current ` +
        `directory, or with \`swerun config set ${keyVar} <key>\``,
    );
    this.name = "MissingApiKeyError";
  }
}

/** model_kwargs that configure the client rather than the request body. */
const NOT_SENT = new Set([
  "api_base",
  "base_url",
  "api_key",
  "extra_headers",
  "extra_body",
  "timeout",
  "stream",
  "drop_params",
  "num_retries",
  "max_retries",
]);
/** Message fields sent to the endpoint; everything else (`extra`, response-only fields) stays in the trajectory. */
const SENT_FIELDS = [
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

/** The config as recorded and shown to templates: no api_key, no secret-looking headers, no key anywhere. */
function publicConfig(config: ModelConfig): Record<string, unknown> {
  const { api_key: _key, extra_headers, ...kwargs } = config.model_kwargs;
  const headers = Object.fromEntries(
    Object.entries(stringRecord(extra_headers)).filter(([name]) => !isCredentialName(name)),
  );
  const model_kwargs = extra_headers === undefined ? kwargs : { ...kwargs, extra_headers: headers };
  return JSON.parse(redact(JSON.stringify({ ...config, model_kwargs }))) as Record<string, unknown>;
}

/** A failed request attempt, as the reply records it (`extra.retries`). */
type RetryRecord = {
  attempt: number;
  error: string;
  error_class: string;
  duration_s: number;
  delay_s: number;
};

/** A model behind any OpenAI-compatible chat-completions endpoint, with tool-call or text-based actions. */
export class OpenAIModel implements Model {
  readonly name: string;
  /** The config with the model name and cache-control default resolved. */
  readonly config: ModelConfig;
  readonly endpoint: Endpoint;
  readonly #client: OpenAI;
  readonly #textBased: boolean;
  readonly #emit: ((event: AgentEvent) => void) | undefined;
  readonly #body: Record<string, unknown>;
  readonly #timeoutS: number;
  readonly #pricing: PricingOptions;
  readonly #errors: ErrorContext;
  readonly #public: Record<string, unknown>;

  private constructor(
    config: ModelConfig,
    endpoint: Endpoint,
    key: { value: string; source: string } | undefined,
    options: { emit?: (event: AgentEvent) => void; textBased: boolean },
  ) {
    this.config = config;
    this.name = config.model_name;
    this.endpoint = endpoint;
    this.#textBased = options.textBased;
    this.#emit = options.emit;
    const kwargs = config.model_kwargs;
    const headers = stringRecord(kwargs.extra_headers);
    // Registered secrets are redacted from everything swerun writes: trajectories, logs, events, errors.
    registerCredential(key?.value);
    registerCredentialEntries(headers);
    this.#timeoutS =
      typeof kwargs.timeout === "number" && kwargs.timeout > 0 ? kwargs.timeout : config.request_timeout;
    this.#client = new OpenAI({
      baseURL: endpoint.baseURL,
      apiKey: key?.value ?? "no-key",
      // The SDK's own timeout covers only the response headers; the request timeout of #request covers the body too.
      timeout: Math.ceil(this.#timeoutS * 2000),
      maxRetries: 0,
      // A reply's body is read up to MAX_REPLY_BYTES (reply-cap.ts).
      fetch: cappedFetch(),
      // The SDK reads OpenAI's organization and project variables itself; other providers must not get them.
      ...(endpoint.provider === "openai" ? {} : { organization: null, project: null }),
      defaultHeaders: key ? headers : { Authorization: null, ...headers },
    });
    const body = Object.fromEntries(Object.entries(kwargs).filter(([name]) => !NOT_SENT.has(name)));
    if (endpoint.provider === "openrouter" && body.usage === undefined) body.usage = { include: true };
    this.#body = { ...body, ...(typeof kwargs.extra_body === "object" ? kwargs.extra_body : {}) };
    if (!options.textBased) this.#body.tools = [BASH_TOOL];
    const registryPath = config.litellm_model_registry;
    this.#pricing = {
      modelName: config.model_name,
      provider: endpoint.provider,
      apiModel: endpoint.model,
      priceProvider: endpoint.info.priceProvider,
      registry: loadPriceRegistry(registryPath),
      registryPath,
      costTracking: config.cost_tracking,
    };
    this.#errors = {
      model: endpoint.model,
      baseURL: endpoint.baseURL,
      keyVar: endpoint.info.keyVars[0] ?? "the API key",
      keySource: key?.source,
    };
    this.#public = publicConfig(config);
  }

  /**
   * Resolves provider, key and prices for `config.model_name`. Throws UserError subclasses for an unknown
   * provider, a missing key (hosted providers without a custom base URL) or an unreadable price registry.
   */
  static async create(
    config: ModelConfig,
    options: { emit?: (event: AgentEvent) => void; textBased: boolean; settings?: SettingsContext },
  ): Promise<OpenAIModel> {
    const modelName =
      config.model_name || lookupSetting(["SWERUN_MODEL_NAME", "MSWEA_MODEL_NAME"], options.settings)?.value;
    if (!modelName) {
      throw new UserError(
        "no model name: pass -m provider/model (e.g. -m openai/gpt-5-mini) or set model.model_name",
      );
    }
    const forceProvider = config.model_class.startsWith("openrouter") ? "openrouter" : undefined;
    const endpoint = resolveEndpoint(modelName, config.model_kwargs, {
      forceProvider,
      settings: options.settings,
    });
    const configuredKey = config.model_kwargs.api_key;
    const key =
      typeof configuredKey === "string" && configuredKey
        ? { value: configuredKey, source: "model.model_kwargs.api_key" }
        : lookupSetting(endpoint.info.keyVars, options.settings);
    if (!key && endpoint.info.keyRequired && !endpoint.customBaseURL) {
      throw new MissingApiKeyError(modelName, endpoint.info.keyVars[0] ?? "the API key");
    }
    const setCache: CacheControlMode | null =
      config.set_cache_control === undefined ? defaultCacheControl(modelName) : config.set_cache_control;
    const resolved = { ...config, model_name: modelName, set_cache_control: setCache };
    const model = new OpenAIModel(resolved, endpoint, key, options);
    await checkPriceKnown(model.#pricing); // a model without a price is refused before its first (paid) call
    return model;
  }

  /** One model call: the messages sent (with retries), the reply as a message, its actions parsed. */
  async query(messages: Message[], options: QueryOptions = {}): Promise<Message> {
    const stats = globalModelStats();
    stats.checkBeforeCall();
    const { response, durationS, retries } = await this.#requestWithRetries(
      this.#outgoing(messages),
      options.signal,
    );
    const { cost } = await responseCost(response, this.#pricing);
    stats.add(cost);
    const choice = (response.choices as Array<Record<string, unknown>>)[0] ?? {};
    const finishReason = typeof choice.finish_reason === "string" ? choice.finish_reason : null;
    const message: Message = {
      ...(choice.message as Record<string, unknown>),
      role: "assistant",
      content: (choice.message as { content?: unknown } | undefined)?.content ?? null,
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

  /** The messages as sent: the exit message left out, only the fields the API takes, cache control marked. */
  #outgoing(messages: Message[]): Record<string, unknown>[] {
    const outgoing = messages
      .filter((message) => message.role !== "exit")
      .map((message) =>
        Object.fromEntries(SENT_FIELDS.filter((f) => message[f] !== undefined).map((f) => [f, message[f]])),
      );
    return this.config.set_cache_control
      ? setCacheControl(outgoing, this.config.set_cache_control)
      : outgoing;
  }

  /**
   * The request, retried as the config says. Failed attempts are recorded (`retries`: error and duration each,
   * for reports) and announced as events; when all fail, the error carries them.
   */
  async #requestWithRetries(
    outgoing: Record<string, unknown>[],
    signal: AbortSignal | undefined,
  ): Promise<{ response: Record<string, unknown>; durationS: number; retries: RetryRecord[] }> {
    const policy: RetryPolicy = {
      attempts: this.config.retry_attempts,
      minWaitS: this.config.retry_min_wait,
      maxWaitS: this.config.retry_max_wait,
    };
    const retries: RetryRecord[] = [];
    let attemptStarted = 0;
    const attempt = (number: number) => {
      attemptStarted = monotonicMs();
      return this.#request(outgoing, signal, number);
    };
    const record = (attempt: number, error: string, errorClass: string, delayS: number) =>
      retries.push({
        attempt,
        error,
        error_class: errorClass,
        duration_s: (monotonicMs() - attemptStarted) / 1000,
        delay_s: delayS,
      });
    const { response, durationS } = await withRetry(attempt, policy, {
      signal,
      // The attempts of a call that never got a reply are recorded with the run's error (its exit message).
      endpoint: `${this.#errors.baseURL} (model "${this.#errors.model}")`,
      onRetry: ({ attempt, maxRetries, error, errorClass, delayS }) => {
        record(attempt, error, errorClass, delayS);
        const time = Date.now() / 1000;
        this.#emit?.({
          type: "model_retry",
          attempt,
          max_retries: maxRetries,
          error_class: errorClass,
          error,
          delay_s: delayS,
          time,
        });
      },
      onExhausted: ({ attempts, error, errorClass }) => {
        record(attempts, error, errorClass, 0);
        const time = Date.now() / 1000;
        this.#emit?.({ type: "model_retry_exhausted", attempts, error_class: errorClass, error, time });
      },
    }).catch((error: unknown) => {
      if (error instanceof ModelRetriesExhaustedError) error.retries = retries;
      throw error;
    });
    return { response, durationS, retries };
  }

  /**
   * Sets the reply's `extra.actions` (from its text or its tool calls). A FormatError's feedback message keeps
   * the call's cost and raw response, as mini-swe-agent's does.
   */
  #parseActions(message: Message, finishReason: string | null): void {
    const template = formatErrorTemplate(this.config);
    try {
      const actions = this.#textBased
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

  /** One attempt, bounded by the request timeout; failures come back classified (retry or stop). */
  async #request(
    messages: Record<string, unknown>[],
    signal: AbortSignal | undefined,
    attempt = 1,
  ): Promise<{ response: Record<string, unknown>; durationS: number }> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), this.#timeoutS * 1000);
    const started = monotonicMs();
    try {
      const body = {
        ...this.#body,
        model: this.endpoint.model,
        messages,
      } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming;
      const combined = signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal;
      const provider = this.endpoint.provider;
      this.#emit?.({
        type: "model_request",
        attempt,
        provider,
        body: body as unknown as Record<string, unknown>,
        time: Date.now() / 1000,
      });
      const response = (await this.#client.chat.completions.create(body, {
        signal: combined,
      })) as unknown as Record<string, unknown>;
      this.#emit?.({
        type: "model_response",
        attempt,
        provider,
        body: response,
        duration_s: (monotonicMs() - started) / 1000,
        time: Date.now() / 1000,
      });
      if (!Array.isArray(response.choices) || response.choices.length === 0) {
        const detail = (response.error as { message?: unknown } | undefined)?.message;
        throw new TransientModelError(
          `the response had no choices${typeof detail === "string" ? `: ${detail}` : ""}`,
        );
      }
      return { response, durationS: (monotonicMs() - started) / 1000 };
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      if (timeout.signal.aborted) {
        throw new TransientModelError(`no response within ${this.#timeoutS} s`, undefined, "TimeoutError");
      }
      throw replyTooLarge(error) ?? classifyError(error, this.#errors);
    } finally {
      clearTimeout(timer);
    }
  }

  formatObservations(
    message: Message,
    outputs: ExecOutput[],
    templateVars: Record<string, unknown>,
  ): Message[] {
    return this.#textBased
      ? textObservations(outputs, this.config.observation_template, templateVars)
      : observationsFor(message, outputs, this.config.observation_template, templateVars);
  }

  formatMessage(message: Message): Message {
    return expandMessage(message, this.config.multimodal_regex);
  }

  templateVars(): Record<string, unknown> {
    return structuredClone(this.#public);
  }

  serialize() {
    return { model: structuredClone(this.#public), model_type: MODEL_TYPES[this.config.model_class] };
  }
}
