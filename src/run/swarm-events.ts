import type { AgentEvent, AgentListener } from "../events.js";
import { roundSeconds } from "../facts/figures.js";
import { type RunFacts, totalTokens } from "../facts/run-facts.js";
import type { Message } from "../messages.js";
import { ModelRetriesExhaustedError } from "../models/model-errors.js";
import type { ModelFacts } from "../models/model-facts.js";
import { monotonicMs } from "../util/clock.js";
import type { LineSink } from "../util/jsonl-sink.js";
import {
  apiResponseFields,
  errorEvent,
  finishReason,
  formatErrorReply,
  isoTimestamp,
  retryExhaustedFields,
  retryFields,
  ToolCallIds,
  text,
  toolCallFields,
  toolResultFields,
} from "./swarm-event-fields.js";
import { SwarmUsage } from "./swarm-usage.js";

/** The name of swerun's one agent in the event stream (SwarmSDK events name the agent that emitted them). */
export const AGENT_NAME = "swerun";
/** The tools every swerun agent has: one bash tool. */
const TOOLS = ["bash"];

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
  readonly #usage = new SwarmUsage();
  /** user_prompt was emitted for the current agent. */
  #prompted = false;
  /** The text of the last user message, the prompt of `user_prompt`. */
  #userText = "";
  #retriesExhausted = false;
  readonly #toolIds = new ToolCallIds();
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
      cost: this.#usage.cost,
      tokens: this.#usage.tokens,
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
    if (error instanceof ModelRetriesExhaustedError && this.#retriesExhausted) return;
    const [type, fields] = errorEvent(error, this.#facts.name || undefined);
    this.emit(type, fields);
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
        this.#usage.callEnd(event.usage, event.cost);
        break;
      case "model_retry":
        this.emit("llm_retry_attempt", retryFields(event, this.#facts.name));
        break;
      case "model_retry_exhausted":
        this.#retryExhausted(event);
        break;
      case "model_request":
        this.emit("llm_api_request", { provider: event.provider, body: event.body, attempt: event.attempt });
        break;
      case "model_response":
        this.emit("llm_api_response", apiResponseFields(event));
        break;
      case "action_start":
        this.emit("tool_call", toolCallFields(event, this.#toolIds.of(event.action)));
        break;
      case "action_end":
        this.emit("tool_result", toolResultFields(event, this.#toolIds.of(event.action)));
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

  #retryExhausted(event: Extract<AgentEvent, { type: "model_retry_exhausted" }>): void {
    this.#retriesExhausted = true;
    this.emit("llm_retry_exhausted", retryExhaustedFields(event, this.#facts.name));
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
      usage: this.#usage.usage(this.#facts),
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
      id: this.#toolIds.of(action),
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
      usage: this.#usage.usage(this.#facts),
      tool_executions: [],
      metadata: {},
    });
    this.#contextWarnings();
  }

  /** `context_limit_warning` for each threshold of the context window the conversation crossed. */
  #contextWarnings(): void {
    for (const fields of this.#usage.contextWarnings(this.#facts)) this.emit("context_limit_warning", fields);
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
      usage: this.#usage.usage(this.#facts),
      metadata: { cost: event.cost, api_calls: event.api_calls },
    });
  }
}
