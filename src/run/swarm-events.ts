import type { AgentEvent, AgentListener } from "../events.js";
import type { Action, Message } from "../messages.js";
import { normalizeUsage } from "../models/cost.js";
import type { ModelFacts } from "../models/model-facts.js";
import type { LineSink } from "../util/jsonl-sink.js";

/** The name of swerun's one agent in the event stream (SwarmSDK events name the agent that emitted them). */
export const AGENT_NAME = "swerun";
/** The tools every swerun agent has: one bash tool. */
const TOOLS = ["bash"];
/** Context usage thresholds that raise a `context_limit_warning`, in percent. */
const THRESHOLDS = [60, 80, 90, 95];

/** UTC ISO 8601 with microseconds, as SwarmSDK writes its timestamps: `2026-11-23T09:31:02.123456Z`. */
export function isoTimestamp(ms = performance.timeOrigin + performance.now()): string {
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
  /** `swarm_name` of swarm_start and swarm_stop. */
  swarmName?: string;
}

/** How a swarm ended, for `swarm_stop`. */
export interface SwarmStop {
  success: boolean;
  /** The final content (a run's submission, or its exit message). */
  content?: string;
  /** The cost and tokens of the whole swarm; default: what this stream saw. */
  totalCost?: number;
  totalTokens?: number;
  agentsInvolved?: string[];
  /** An error that ended the swarm: emitted as `internal_error` before `swarm_stop`. */
  error?: unknown;
}

interface CallUsage {
  input: number;
  output: number;
  cost: number;
  raw: unknown;
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

function percent(part: number, whole: number): string {
  return `${((part / whole) * 100).toFixed(2)}%`;
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
  readonly #swarmName: string | undefined;
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
  #warned = new Set<number>();
  #toolIds = new WeakMap<Action, string>();
  #nextTool = 0;
  #pendingReply: Message | undefined;
  #lastReply: Message | undefined;
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
    this.#swarmName = options.swarmName;
    this.listener = (event) => this.#on(event);
  }

  /** Cost and tokens of every model call this stream saw. */
  get totals(): { cost: number; tokens: number; agents: string[] } {
    return { cost: this.#totalCost, tokens: this.#totalTokens, agents: [...new Set(this.#agentsStarted)] };
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
    this.#startedAt = performance.now();
    this.emit("swarm_start", { swarm_name: this.#swarmName, lead_agent: this.#agent, prompt });
  }

  /** `internal_error` when the swarm ended with one, then `swarm_stop`, once (later calls do nothing). */
  stop(stop: SwarmStop): void {
    if (this.#stopped) return;
    this.start();
    this.#stopped = true;
    if (stop.error !== undefined) {
      const error = stop.error;
      this.emit("internal_error", {
        error_class: error instanceof Error ? error.constructor.name : typeof error,
        error_message: error instanceof Error ? error.message : String(error),
      });
    }
    const totals = this.totals;
    this.emit("swarm_stop", {
      swarm_name: this.#swarmName,
      lead_agent: this.#agentNames[0],
      last_agent: this.#agentsStarted.at(-1),
      content: stop.content ?? this.#stopContent,
      success: stop.success,
      duration: Math.round(performance.now() - this.#startedAt) / 1000,
      total_cost: stop.totalCost ?? totals.cost,
      total_tokens: stop.totalTokens ?? totals.tokens,
      agents_involved: stop.agentsInvolved ?? totals.agents,
    });
  }

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
        this.emit("user_prompt", {
          model: this.#facts.name,
          provider: this.#facts.provider,
          message_count: this.#messageCount,
          tools: TOOLS,
          source: "user",
        });
        break;
      case "model_call_end":
        this.#callEnd(event.usage, event.cost);
        break;
      case "model_retry":
        this.emit("model_retry", {
          model: this.#facts.name,
          attempt: event.attempt,
          error_message: event.error,
          retry_delay: event.delay_s,
        });
        break;
      case "action_start":
        this.emit("tool_call", {
          tool_call_id: this.#toolId(event.action),
          tool: "bash",
          arguments: { command: event.action.command },
          metadata: { step: event.step },
        });
        break;
      case "action_end":
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
        break;
      case "format_error": {
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
        break;
      }
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

  #agentStart(event: Extract<AgentEvent, { type: "agent_start" }>): void {
    this.start();
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
    if (message.role === "exit") {
      this.#exit = message;
      return;
    }
    if (message.role !== "assistant") {
      const reply = formatErrorReply(message);
      if (reply) this.#pendingReply = reply;
      return;
    }
    this.#lastReply = message;
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
    this.emit("agent_step", {
      model: this.#facts.name,
      content: text(message.content),
      tool_calls: toolCalls,
      finish_reason: finishReason(message) ?? "tool_calls",
      usage: this.#usage(),
      tool_executions: [],
      metadata: {},
    });
    this.#contextWarnings();
  }

  #callEnd(raw: unknown, cost: number): void {
    const usage = normalizeUsage(raw);
    const input = usage?.prompt_tokens ?? 0;
    const output = usage?.completion_tokens ?? 0;
    this.#call = { input, output, cost, raw };
    if (usage) this.#lastPrompt = input;
    this.#outputTokens += output;
    this.#totalTokens += input + output;
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
      input_tokens: call.input,
      output_tokens: call.output,
      total_tokens: call.input + call.output,
      ...(split ? { input_cost: split.input_cost, output_cost: split.output_cost } : {}),
      total_cost: call.cost,
      cumulative_input_tokens: this.#lastPrompt,
      cumulative_output_tokens: this.#outputTokens,
      cumulative_total_tokens: cumulative,
      ...(limit
        ? {
            context_limit: limit,
            tokens_used_percentage: percent(cumulative, limit),
            tokens_remaining: Math.max(0, limit - cumulative),
          }
        : {}),
    };
  }

  /** `context_limit_warning` for each threshold the last prompt crossed (each once per swarm). */
  #contextWarnings(): void {
    const limit = this.#facts.contextWindow;
    if (!limit) return;
    const used = this.#lastPrompt;
    for (const threshold of THRESHOLDS) {
      if (used < (limit * threshold) / 100 || this.#warned.has(threshold)) continue;
      this.#warned.add(threshold);
      this.emit("context_limit_warning", {
        model: this.#facts.name,
        threshold: `${threshold}%`,
        current_usage: percent(used, limit),
        tokens_used: used,
        tokens_remaining: Math.max(0, limit - used),
        context_limit: limit,
        metadata: {},
      });
    }
  }

  #agentStop(event: Extract<AgentEvent, { type: "run_end" }>): void {
    this.#ensureAgent();
    const exit = this.#exit;
    const content =
      event.exit_status === "Submitted" ? event.submission : exit ? text(exit.content) : event.submission;
    this.#stopContent = content;
    const reply = this.#lastReply;
    this.emit("agent_stop", {
      model: this.#facts.name,
      content,
      finish_reason: reply ? finishReason(reply) : undefined,
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
