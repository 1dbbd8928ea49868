import type { AgentEvent, AgentListener } from "../events.js";
import { roundSeconds } from "../facts/figures.js";
import { callTokens, NO_TOKENS, type RunFacts, type TokenFacts, totalTokens } from "../facts/run-facts.js";
import type { Action, Message } from "../messages.js";
import { ModelRequestError, ModelRetriesExhaustedError } from "../models/model-errors.js";
import type { ModelFacts } from "../models/model-facts.js";
import { monotonicMs, preciseNowMs } from "../util/clock.js";
import type { LineSink } from "../util/jsonl-sink.js";

/** The name of swerun's one agent in the event stream (SwarmSDK events name the agent that emitted them). */
export const AGENT_NAME = "swerun";
/** The tools every swerun agent has: one bash tool. */
const TOOLS = ["bash"];
/** Context usage thresholds that raise a `context_limit_warning`, in percent. */
const THRESHOLDS = [60, 80, 90, 95];

/** UTC ISO 8601 with microseconds, as SwarmSDK writes its timestamps: `2026-11-23T09:31:02.123456Z`. */
export function isoTimestamp(ms = preciseNowMs()): string {
  const whole = Math.floor(ms);
  const micros = Math.min(999, Math.floor((ms - whole) * 1000));
  return `${new Date(whole).toISOString().slice(0, -1)}${String(micros).padStart(3, "0")}Z`;
}

/** Where a stream's events belong: its swarm, the parent swarm, the execution (swerun's run id). */
export interface SwarmIds {
  swarmId: string;
  parentSwarmId?: string;
  executionId: string;
}

export interface SwarmStreamOptions extends SwarmIds {
  sink: LineSink;
  /** What is known about the models the agents may use, by model name. */
  models?: ModelFacts[];
  /** Names of the agents in the order they start; the last repeats. Default: `["swerun"]`. */
  agents?: string[];
  /** `swarm_name` of swarm_start, agent_start and swarm_stop; default: the last part of the swarm id. */
  swarmName?: string;
}

/** How a swarm ended, for `swarm_stop`. */
export interface SwarmStop {
  success: boolean;
  /** The final content (a run's submission, or its exit message). */
  content?: string;
  /** The cost and total tokens of the whole swarm; default: what this stream saw. */
  totalCost?: number;
  totalTokens?: number;
  /** Its duration in seconds; default: the time from `start` to `stop` as this stream measured it. */
  duration?: number;
  agentsInvolved?: string[];
  /** The agent that ended the swarm; default: the last agent this stream saw start. */
  lastAgent?: string;
  /** An error that ended the swarm: emitted as `internal_error` before `swarm_stop`. */
  error?: unknown;
}

interface CallUsage {
  /** The call's token counts (see `callTokens`); none when its response recorded no usage. */
  tokens: TokenFacts;
  cost: number;
  raw: unknown;
}

/**
 * What `swarm_stop` says of a run or an instance, read from its facts: its cost, its total tokens (see
 * `totalTokens`) and its wall time, the figures every other output shows for it.
 */
export function stopFigures(facts: RunFacts): Pick<SwarmStop, "totalCost" | "totalTokens" | "duration"> {
  return {
    totalCost: facts.cost ?? 0,
    totalTokens: totalTokens(facts.tokens),
    ...(facts.wall_time_s === null ? {} : { duration: roundSeconds(facts.wall_time_s) }),
  };
}

function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => (part as { text?: unknown })?.text ?? "").join("");
  return content == null ? "" : JSON.stringify(content);
}

/**
 * The reply a format error's feedback keeps (as mini-swe-agent, swerun records no assistant message for a
 * reply that could not be run): its text and raw response, as an assistant message.
 */
function formatErrorReply(message: Message): Message | undefined {
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

function finishReason(message: Message): string | undefined {
  const extra = message.extra ?? {};
  const choices = (extra.response as { choices?: Array<{ finish_reason?: unknown }> } | undefined)?.choices;
  const reason = choices?.[0]?.finish_reason ?? extra.finish_reason;
  return typeof reason === "string" ? reason : undefined;
}

/** A percentage as SwarmSDK writes it (a Ruby float rounded to 2 places): `6.23%`, `82.5%`, `60.0%`. */
export function percent(part: number, whole: number): string {
  const value = Math.round((part / whole) * 10000) / 100;
  return `${Number.isInteger(value) ? value.toFixed(1) : String(value)}%`;
}

/** The class name of an error (`ModelRetriesExhaustedError`), else its type. */
function errorClass(error: unknown): string {
  return error instanceof Error ? error.constructor.name : typeof error;
}

/**
 * Turns one swarm's agent events into SwarmSDK-shaped events on a sink: a run (swarm `main`), or one
 * instance of a batch (a child swarm). Subscribe `listener` to the run's bus; call `start` to open the
 * swarm early (a batch does, before the instance's environment starts) and `stop` once the run is over.
 * Every line carries `type`, `timestamp`, `swarm_id`, `parent_swarm_id`, `execution_id` and `agent`;
 * keys whose value is null or undefined are left out, as SwarmSDK's LogStream does.
 */
export class SwarmEventStream {
  readonly ids: SwarmIds;
  readonly listener: AgentListener;
  readonly #sink: LineSink;
  readonly #models: Map<string, ModelFacts>;
  readonly #agentNames: string[];
  readonly #swarmName: string;
  readonly #agentsStarted: string[] = [];
  #agent: string;
  #facts: ModelFacts = { name: "", provider: "" };
  #started = false;
  #stopped = false;
  #startedAt = 0;
  #messageCount = 0;
  #call: CallUsage | undefined;
  #lastPrompt = 0;
  #outputTokens = 0;
  #totalTokens = 0;
  #totalCost = 0;
  /** user_prompt was emitted for the current agent. */
  #prompted = false;
  /** The text of the last user message, the prompt of `user_prompt`. */
  #userText = "";
  #retriesExhausted = false;
  #warned = new Set<number>();
  #toolIds = new WeakMap<Action, string>();
  #nextTool = 0;
  #pendingReply: Message | undefined;
  #exit: Message | undefined;
  #stopContent: string | undefined;

  constructor(options: SwarmStreamOptions) {
    this.ids = {
      swarmId: options.swarmId,
      executionId: options.executionId,
      ...(options.parentSwarmId ? { parentSwarmId: options.parentSwarmId } : {}),
    };
    this.#sink = options.sink;
    this.#models = new Map((options.models ?? []).map((facts) => [facts.name, facts]));
    this.#agentNames = options.agents?.length ? options.agents : [AGENT_NAME];
    this.#agent = this.#agentNames[0] ?? AGENT_NAME;
    this.#swarmName = options.swarmName ?? options.swarmId.split("/").at(-1) ?? options.swarmId;
    this.listener = (event) => this.#on(event);
  }

  /** Cost and total tokens (see `totalTokens`) of every model call this stream saw, and its agents. */
  get totals(): { cost: number; tokens: number; agents: string[] } {
    return {
      cost: this.#totalCost,
      tokens: this.#totalTokens,
      agents: [...new Set(this.#agentsStarted)],
    };
  }

  /** Writes one event of this swarm: the common fields first, then `fields` without null values. */
  emit(type: string, fields: Record<string, unknown> = {}, agent: string | undefined = this.#agent): void {
    const record: Record<string, unknown> = {
      type,
      timestamp: isoTimestamp(),
      swarm_id: this.ids.swarmId,
      parent_swarm_id: this.ids.parentSwarmId,
      execution_id: this.ids.executionId,
      agent,
    };
    for (const [key, value] of Object.entries(fields)) record[key] = value;
    for (const key of Object.keys(record)) if (record[key] == null) delete record[key];
    this.#sink.write(record);
  }

  /** `swarm_start`, once (later calls do nothing). */
  start(prompt?: string): void {
    if (this.#started) return;
    this.#started = true;
    this.#startedAt = monotonicMs();
    this.emit("swarm_start", { swarm_name: this.#swarmName, lead_agent: this.#agent, prompt });
  }

  /**
   * The error that ended the swarm, if one did (`llm_request_failed` for a model request refused for good,
   * `internal_error` for anything else; exhausted retries were already reported as `llm_retry_exhausted`),
   * then `swarm_stop`, once (later calls do nothing).
   */
  stop(stop: SwarmStop): void {
    if (this.#stopped) return;
    this.start();
    this.#stopped = true;
    this.#error(stop.error);
    const totals = this.totals;
    this.emit("swarm_stop", {
      swarm_name: this.#swarmName,
      lead_agent: this.#agentNames[0],
      last_agent: stop.lastAgent ?? this.#agentsStarted.at(-1),
      content: stop.content ?? this.#stopContent,
      success: stop.success,
      duration: stop.duration ?? roundSeconds((monotonicMs() - this.#startedAt) / 1000),
      total_cost: stop.totalCost ?? totals.cost,
      total_tokens: stop.totalTokens ?? totals.tokens,
      agents_involved: stop.agentsInvolved ?? totals.agents,
    });
  }

  #error(error: unknown): void {
    if (error === undefined) return;
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof ModelRetriesExhaustedError) {
      if (this.#retriesExhausted) return;
      this.emit("llm_retry_exhausted", {
        model: this.#facts.name || undefined,
        attempts: error.attempts,
        error_class: error.errorClass,
        error_message: message,
      });
    } else if (error instanceof ModelRequestError) {
      this.emit("llm_request_failed", {
        model: this.#facts.name || undefined,
        error_type: errorClass(error).replace(/^Model|Error$/g, ""),
        error_class: errorClass(error),
        error_message: message,
        status_code: error.status,
        retryable: false,
      });
    } else {
      this.emit("internal_error", {
        source: "swerun",
        context: "run",
        error_class: errorClass(error),
        error_message: message,
      });
    }
  }

  /** Each agent event, turned into the swarm events it stands for. */
  #on(event: AgentEvent): void {
    switch (event.type) {
      case "run_start":
        this.start(event.task);
        break;
      case "agent_start":
        this.#agentStart(event);
        break;
      case "message":
        this.#message(event.message);
        break;
      case "model_call_start":
        this.#ensureAgent();
        if (!this.#prompted) this.#userPrompt();
        break;
      case "model_call_end":
        this.#callEnd(event.usage, event.cost);
        break;
      case "model_retry":
        this.#retry(event);
        break;
      case "model_retry_exhausted":
        this.#retryExhausted(event);
        break;
      case "model_request":
        this.emit("llm_api_request", { provider: event.provider, body: event.body, attempt: event.attempt });
        break;
      case "model_response":
        this.#apiResponse(event);
        break;
      case "action_start":
        this.#toolCall(event);
        break;
      case "action_end":
        this.#toolResult(event);
        break;
      case "format_error":
        this.#formatError(event);
        break;
      case "limit_reached":
        this.emit("limit_reached", { exit_status: event.exit_status });
        break;
      case "run_end":
        this.#agentStop(event);
        break;
      case "saved":
        break;
    }
  }

  #retry(event: Extract<AgentEvent, { type: "model_retry" }>): void {
    this.emit("llm_retry_attempt", {
      model: this.#facts.name,
      attempt: event.attempt,
      max_retries: event.max_retries,
      error_class: event.error_class,
      error_message: event.error,
      retry_delay: event.delay_s,
    });
  }

  #retryExhausted(event: Extract<AgentEvent, { type: "model_retry_exhausted" }>): void {
    this.#retriesExhausted = true;
    this.emit("llm_retry_exhausted", {
      model: this.#facts.name,
      attempts: event.attempts,
      error_class: event.error_class,
      error_message: event.error,
    });
  }

  #toolCall(event: Extract<AgentEvent, { type: "action_start" }>): void {
    this.emit("tool_call", {
      tool_call_id: this.#toolId(event.action),
      tool: "bash",
      arguments: { command: event.action.command },
      metadata: { step: event.step },
    });
  }

  #toolResult(event: Extract<AgentEvent, { type: "action_end" }>): void {
    this.emit("tool_result", {
      tool_call_id: this.#toolId(event.action),
      tool: "bash",
      result: event.output,
      metadata: {
        step: event.step,
        returncode: event.returncode,
        duration: Math.round(event.duration_s * 1e6) / 1e6,
        exception_info: event.exception_info,
      },
    });
  }

  /** `format_error`, with the reply that failed to parse (held back until now), then any context warnings. */
  #formatError(event: Extract<AgentEvent, { type: "format_error" }>): void {
    const reply = this.#pendingReply;
    this.#pendingReply = undefined;
    this.emit("format_error", {
      model: this.#facts.name,
      consecutive: event.consecutive,
      content: reply ? text(reply.content) : undefined,
      finish_reason: reply ? finishReason(reply) : undefined,
      feedback: event.content,
      usage: this.#usage(),
    });
    this.#contextWarnings();
  }

  /** `user_prompt`, once per agent, before its first model call: the user message it sends (the task). */
  #userPrompt(): void {
    this.#prompted = true;
    const context = {
      model: this.#facts.name,
      provider: this.#facts.provider,
      message_count: this.#messageCount,
      tools: TOOLS,
      delegates_to: [],
      source: "user",
    };
    this.emit("user_prompt", {
      ...context,
      metadata: { prompt: this.#userText, ...context, timestamp: isoTimestamp().replace(/\.\d+Z$/, "Z") },
    });
  }

  #apiResponse(event: Extract<AgentEvent, { type: "model_response" }>): void {
    const body = event.body;
    const usage = callTokens(body.usage);
    const choices = Array.isArray(body.choices) ? (body.choices as Array<{ finish_reason?: unknown }>) : [];
    const reason = choices[0]?.finish_reason;
    this.emit("llm_api_response", {
      provider: event.provider,
      body,
      duration_seconds: Math.round(event.duration_s * 1000) / 1000,
      usage: usage
        ? { input_tokens: usage.input, output_tokens: usage.completion, total_tokens: totalTokens(usage) }
        : undefined,
      model: typeof body.model === "string" ? body.model : undefined,
      finish_reason: typeof reason === "string" ? reason : undefined,
      attempt: event.attempt,
    });
  }

  #agentStart(event: Extract<AgentEvent, { type: "agent_start" }>): void {
    this.start();
    this.#prompted = false;
    this.#agent = this.#agentNames[Math.min(this.#agentsStarted.length, this.#agentNames.length - 1)] ?? "";
    this.#agentsStarted.push(this.#agent);
    this.#messageCount = event.messages;
    this.#facts = this.#models.get(event.model) ?? {
      name: event.model,
      provider: event.model.includes("/") ? (event.model.split("/")[0] ?? "") : event.model,
    };
    this.emit("agent_start", {
      swarm_name: this.#swarmName,
      model: this.#facts.name,
      provider: this.#facts.provider,
      directory: event.cwd || process.cwd(),
      system_prompt: event.system_prompt,
      tools: TOOLS,
      delegates_to: [],
      is_delegation_instance: false,
    });
    if (this.#facts.lookupWarning) {
      this.emit("model_lookup_warning", {
        model: this.#facts.name,
        error_message: this.#facts.lookupWarning,
        suggestions: [],
      });
    }
  }

  /** Events of an agent whose start was not announced (a run that failed before its loop). */
  #ensureAgent(): void {
    this.start();
    if (this.#agentsStarted.length === 0) this.#agentsStarted.push(this.#agent);
  }

  #message(message: Message): void {
    this.#messageCount += 1;
    if (message.role === "user" && !this.#prompted) this.#userText = text(message.content);
    if (message.role === "exit") {
      this.#exit = message;
      return;
    }
    if (message.role !== "assistant") {
      const reply = formatErrorReply(message);
      if (reply) this.#pendingReply = reply;
      return;
    }
    const actions = message.extra?.actions ?? [];
    if (actions.length === 0) {
      this.#pendingReply = message;
      return;
    }
    this.#pendingReply = undefined;
    const toolCalls = actions.map((action) => ({
      id: this.#toolId(action),
      name: "bash",
      arguments: { command: action.command },
    }));
    const reason = finishReason(message);
    this.emit("agent_step", {
      model: this.#facts.name,
      content: text(message.content),
      tool_calls: toolCalls,
      finish_reason: "tool_calls",
      // swerun's addition: the provider's own finish reason when it is not "tool_calls" (e.g. "length").
      response_finish_reason: reason === "tool_calls" ? undefined : reason,
      usage: this.#usage(),
      tool_executions: [],
      metadata: {},
    });
    this.#contextWarnings();
  }

  #callEnd(raw: unknown, cost: number): void {
    const tokens = callTokens(raw);
    this.#call = { tokens: tokens ?? NO_TOKENS, cost, raw };
    if (tokens) this.#lastPrompt = tokens.prompt;
    this.#outputTokens += tokens?.completion ?? 0;
    this.#totalTokens += tokens ? totalTokens(tokens) : 0;
    this.#totalCost += cost;
  }

  /** The last call's usage as SwarmSDK reports it (context keys only when the context window is known). */
  #usage(): Record<string, unknown> | undefined {
    const call = this.#call;
    if (!call) return undefined;
    const split = this.#facts.splitCost?.(call.raw);
    const cumulative = this.#lastPrompt + this.#outputTokens;
    const limit = this.#facts.contextWindow;
    return {
      input_tokens: call.tokens.input,
      output_tokens: call.tokens.completion,
      total_tokens: totalTokens(call.tokens),
      ...(split ? { input_cost: split.input_cost, output_cost: split.output_cost } : {}),
      total_cost: call.cost,
      // SwarmSDK's cumulative figures measure the context: the last prompt (cache included) and every output.
      cumulative_input_tokens: this.#lastPrompt,
      cumulative_output_tokens: this.#outputTokens,
      cumulative_total_tokens: cumulative,
      ...(limit
        ? {
            context_limit: limit,
            tokens_used_percentage: percent(cumulative, limit),
            tokens_remaining: limit - cumulative,
          }
        : {}),
    };
  }

  /**
   * `context_limit_warning` for each threshold the conversation crossed (each once per swarm), measured as
   * the usage's `tokens_used_percentage`: the cumulative total (last prompt plus every completion).
   */
  #contextWarnings(): void {
    const limit = this.#facts.contextWindow;
    if (!limit) return;
    const used = this.#lastPrompt + this.#outputTokens;
    for (const threshold of THRESHOLDS) {
      if (used < (limit * threshold) / 100 || this.#warned.has(threshold)) continue;
      this.#warned.add(threshold);
      this.emit("context_limit_warning", {
        model: this.#facts.name,
        threshold: `${threshold}%`,
        current_usage: percent(used, limit),
        tokens_used: used,
        tokens_remaining: limit - used,
        context_limit: limit,
        metadata: {},
        compression_triggered: false,
      });
    }
  }

  #agentStop(event: Extract<AgentEvent, { type: "run_end" }>): void {
    this.#ensureAgent();
    const exit = this.#exit;
    const content =
      event.exit_status === "Submitted" ? event.submission : exit ? text(exit.content) : event.submission;
    this.#stopContent = content;
    // A submission ends the agent and its swarm (SwarmSDK's FinishSwarm); any other end stops the agent.
    this.emit("agent_stop", {
      model: this.#facts.name,
      content,
      finish_reason: event.exit_status === "Submitted" ? "finish_swarm" : "stop",
      exit_status: event.exit_status,
      usage: this.#usage(),
      metadata: { cost: event.cost, api_calls: event.api_calls },
    });
  }

  #toolId(action: Action): string {
    let id = this.#toolIds.get(action) ?? action.tool_call_id;
    if (!id) {
      this.#nextTool += 1;
      id = `call_${this.#nextTool}`;
    }
    this.#toolIds.set(action, id);
    return id;
  }
}
