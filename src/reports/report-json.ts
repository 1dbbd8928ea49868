import type { RetryFacts, RunFacts, ToolCallFacts, TurnFacts } from "../facts/run-facts.js";
import { type Outcome, outcomeOf } from "../facts/status.js";

export type { Outcome };

/** A timeline entry (swival's `llm_call`, `tool_call`, `guardrail`, `truncated_response`). */
export type TimelineEntry = { turn: number; type: string } & Record<string, unknown>;

/** `swerun report`'s JSON of one run, with swival's keys (`version` 1). */
export interface ReportJson {
  version: 1;
  timestamp: string | null;
  task: string | null;
  model: string | null;
  provider: string | null;
  settings: Record<string, unknown>;
  result: { outcome: Outcome; answer: string | null; exit_code: number; error_message?: string };
  stats: Record<string, unknown>;
  timeline: TimelineEntry[];
}

/** What the report needs besides the run's facts: what the model's description knows (see `modelLimitsOf`). */
export interface ReportOptions {
  /** The model's context window (`settings.context_length`). */
  contextLength?: number | null;
  /** The model's own limit of output tokens per reply (`settings.max_output_tokens` when the config sets none). */
  maxOutputTokens?: number | null;
}

const round3 = (seconds: number) => Math.round(seconds * 1000) / 1000;
const roundOrNull = (seconds: number | null) => (seconds === null ? null : round3(seconds));

/** Python's `datetime.isoformat()` of a UTC time: microseconds and `+00:00`. */
export function pythonIsoformat(unixSeconds: number): string {
  const micros = Math.round(unixSeconds * 1e6);
  const date = new Date(Math.floor(micros / 1000));
  const fraction = String(((micros % 1e6) + 1e6) % 1e6).padStart(6, "0");
  return `${date.toISOString().slice(0, 19)}.${fraction}+00:00`;
}

/** The provider of a model name: its `provider/` prefix (OpenRouter for the openrouter model classes). */
export function providerOf(model: string | null, modelClass: string | null): string | null {
  if (modelClass?.startsWith("openrouter")) return "openrouter";
  if (!model?.includes("/")) return null;
  return model.slice(0, model.indexOf("/"));
}

/** Models that do not sample (scripted replies, a person typing): their settings say greedy. */
const NOT_SAMPLING = /deterministic|test_models|human/i;

/**
 * Sampling settings the provider uses when the config sends none: the OpenAI Chat Completions API's defaults
 * (temperature 1, top_p 1), which every provider swerun speaks to takes; a model that does not sample
 * (scripted, human) is greedy (temperature 0).
 */
function samplingDefaults(facts: RunFacts): { temperature: number; top_p: number } {
  const stand = NOT_SAMPLING.test(`${facts.model_class ?? ""} ${facts.model ?? ""}`);
  return { temperature: stand ? 0 : 1, top_p: 1 };
}

function settingsOf(facts: RunFacts, options: ReportOptions): Record<string, unknown> {
  const kwargs = facts.model_kwargs;
  const agent = facts.agent_config;
  const pick = (key: string) => (kwargs && kwargs[key] !== undefined ? kwargs[key] : null);
  const whitelist = agent && Array.isArray(agent.whitelist_actions) ? agent.whitelist_actions : [];
  const defaults = samplingDefaults(facts);
  const maxTokens = pick("max_tokens") ?? pick("max_completion_tokens") ?? pick("max_output_tokens");
  return {
    temperature: pick("temperature") ?? defaults.temperature,
    top_p: pick("top_p") ?? defaults.top_p,
    seed: pick("seed"),
    max_turns: agent && typeof agent.step_limit === "number" ? agent.step_limit : null,
    // Without a limit in the config, the model's own (its description's); 0 when neither is known: no limit sent.
    max_output_tokens: maxTokens ?? options.maxOutputTokens ?? 0,
    context_length: options.contextLength ?? null,
    yolo: agent && typeof agent.mode === "string" ? agent.mode === "yolo" : null,
    allowed_commands: whitelist.map(String).sort(),
    skills_discovered: [],
    instructions_loaded: [],
  };
}

function errorMessageOf(facts: RunFacts): string {
  if (facts.error_message) return facts.error_message;
  const status = facts.exit_status;
  if (status === "RepeatedFormatError") {
    return "RepeatedFormatError: the model's replies could not be run too many times in a row";
  }
  if (status === "UserInterruption" || status === "Interrupted") {
    return `${status}: the run was stopped before the agent finished (Ctrl-C or SIGTERM)`;
  }
  if (status === "") return "the trajectory records no end: the run is still going or was killed";
  return status;
}

/**
 * The exit code `swerun run` ended (or would end) with: the code recorded with an error, else 0 for any end
 * that is not an error (swerun exits 0 when the agent stops, whatever its exit status), else 1.
 */
function exitCodeOfFacts(facts: RunFacts): number {
  if (facts.exit_code !== undefined) return facts.exit_code;
  return facts.error_message === null && facts.exit_status !== "" ? 0 : 1;
}

/**
 * The finish reason of a reply: as the provider gave it, else (scripted models record none) what the reply
 * was: `tool_calls` when the reply carried tool calls, else `stop`.
 */
function finishReasonOf(turn: TurnFacts): string {
  if (turn.finish_reason !== null) return turn.finish_reason;
  return (turn.requested_tool_calls ?? 0) > 0 ? "tool_calls" : "stop";
}

/** Counts of one tool name. */
type Counts = { succeeded: number; failed: number };

/** A total of seconds that stays null until a time is added. */
function addTime(total: number | null, seconds: number | null): number | null {
  return seconds === null ? total : (total ?? 0) + seconds;
}

/**
 * The timeline of a run as it is read turn by turn, and the totals its stats need. swerun never compacts
 * the conversation, so no call is a retry in the seed's sense (`is_retry` marks a call retried after a
 * compaction, with its `retry_reason`): a retried HTTP request is a failed `llm_call` of its own, then the
 * attempt that got the reply.
 */
class Timeline {
  readonly entries: TimelineEntry[] = [];
  readonly byName: Record<string, Counts> = {};
  llmTime: number | null = null;
  toolTime: number | null = null;
  guardrails = 0;
  truncated = 0;
  /** The last format error and how many identical ones ended the turns just before (0 after a turn without). */
  #repeated = { error: "", count: 0 };

  /** A turn: its failed request attempts, its call, a truncation, its invalid tool calls, its format error, its commands. */
  addTurn(turn: TurnFacts): void {
    this.addFailedAttempts(turn.turn, turn.retries, turn.prompt_tokens);
    this.#addCall(turn);
    for (const call of turn.invalid_tool_calls ?? []) this.#addInvalidToolCall(turn, call.name);
    this.#addGuardrail(turn);
    for (const call of turn.tool_calls) this.#addToolCall(turn.turn, call);
  }

  /** Request attempts that failed (retried, or never answered): an `llm_call` each, with the error. */
  addFailedAttempts(turn: number, attempts: RetryFacts[], promptTokens: number | null): void {
    for (const attempt of attempts) {
      this.llmTime = addTime(this.llmTime, attempt.duration_s);
      this.entries.push({
        turn,
        type: "llm_call",
        duration_s: roundOrNull(attempt.duration_s),
        prompt_tokens_est: promptTokens,
        finish_reason: /context window/i.test(attempt.error) ? "context_overflow" : "error",
        is_retry: false,
        error: attempt.error,
      });
    }
  }

  #addCall(turn: TurnFacts): void {
    this.llmTime = addTime(this.llmTime, turn.duration_s);
    const finishReason = finishReasonOf(turn);
    this.entries.push({
      turn: turn.turn,
      type: "llm_call",
      duration_s: roundOrNull(turn.duration_s),
      prompt_tokens_est: turn.prompt_tokens,
      finish_reason: finishReason,
      is_retry: false,
    });
    if (finishReason === "length") {
      this.truncated += 1;
      this.entries.push({ turn: turn.turn, type: "truncated_response" });
    }
  }

  /** A tool call whose arguments were not valid JSON: a failed `tool_call` with `arguments: null`. */
  #addInvalidToolCall(turn: TurnFacts, name: string): void {
    this.#count(name, false);
    this.toolTime = addTime(this.toolTime, 0);
    this.entries.push({
      turn: turn.turn,
      type: "tool_call",
      name,
      arguments: null,
      succeeded: false,
      duration_s: 0,
      result_length: (turn.format_feedback ?? "").length,
      error: turn.format_error ?? "the arguments are not valid JSON",
    });
  }

  /**
   * The guardrail (seed 000): the agent repeated the same failing call, its format error identical to the
   * one just before: `nudge` at the second identical error in a row, `stop` from the third on. The first
   * error (and one unlike the last) is fed back without a guardrail.
   */
  #addGuardrail(turn: TurnFacts): void {
    const error = turn.format_error;
    if (error === null) {
      this.#repeated = { error: "", count: 0 };
      return;
    }
    const count = this.#repeated.count > 0 && this.#repeated.error === error ? this.#repeated.count + 1 : 1;
    this.#repeated = { error, count };
    if (count < 2) return;
    this.guardrails += 1;
    this.entries.push({
      turn: turn.turn,
      type: "guardrail",
      tool: turn.invalid_tool_calls?.[0]?.name ?? "bash",
      level: count === 2 ? "nudge" : "stop",
      error,
    });
  }

  #addToolCall(turn: number, call: ToolCallFacts): void {
    const ok = !call.failed;
    this.#count(call.name, ok);
    this.toolTime = addTime(this.toolTime, call.duration_s);
    const error = call.exception_info || (call.returncode === null ? "" : `exit code ${call.returncode}`);
    this.entries.push({
      turn,
      type: "tool_call",
      name: call.name,
      arguments: { command: call.command },
      succeeded: ok,
      duration_s: roundOrNull(call.duration_s),
      result_length: call.output.length,
      ...(ok ? {} : { error }),
    });
  }

  #count(name: string, ok: boolean): void {
    this.byName[name] ??= { succeeded: 0, failed: 0 };
    (this.byName[name] as Counts)[ok ? "succeeded" : "failed"] += 1;
  }
}

/** The report's `result`: the outcome, the answer unless it failed, the exit code and the error. */
function resultOf(facts: RunFacts): ReportJson["result"] {
  const outcome = outcomeOf(facts);
  return {
    outcome,
    answer: outcome === "error" ? null : facts.submission,
    exit_code: exitCodeOfFacts(facts),
    ...(outcome === "error" ? { error_message: errorMessageOf(facts) } : {}),
  };
}

/** The report's `stats`, from the facts (turns, request attempts) and the timeline's totals. */
function statsOf(facts: RunFacts, timeline: Timeline): ReportJson["stats"] {
  const counts = Object.values(timeline.byName);
  return {
    turns: facts.steps,
    tool_calls_total: counts.reduce((sum, c) => sum + c.succeeded + c.failed, 0),
    tool_calls_succeeded: counts.reduce((sum, c) => sum + c.succeeded, 0),
    tool_calls_failed: counts.reduce((sum, c) => sum + c.failed, 0),
    tool_calls_by_name: Object.fromEntries(
      Object.entries(timeline.byName).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
    ),
    compactions: 0,
    turn_drops: 0,
    guardrail_interventions: timeline.guardrails,
    truncated_responses: timeline.truncated,
    llm_calls: facts.attempts,
    total_llm_time_s: facts.attempts === 0 ? 0 : roundOrNull(timeline.llmTime),
    total_tool_time_s: counts.length === 0 ? 0 : roundOrNull(timeline.toolTime),
  };
}

/**
 * The swival-shaped report of one run: outcome, settings, aggregate stats and the action-by-action
 * timeline, read from the run's facts. Pure: the same facts give the same report. Every model request
 * attempt is an `llm_call` (failed ones with `finish_reason: "error"`), every command a `tool_call` named
 * after its program, a format error repeated identically a `guardrail` (a reply whose tool call was not valid
 * JSON is also a `tool_call` with `arguments: null`), every reply cut at the token limit a `truncated_response`.
 */
export function buildReport(facts: RunFacts, options: ReportOptions = {}): ReportJson {
  const timeline = new Timeline();
  for (const turn of facts.turns) timeline.addTurn(turn);
  timeline.addFailedAttempts(facts.turns.length + 1, facts.unanswered_attempts ?? [], null);
  return {
    version: 1,
    timestamp: facts.ended_at === null ? null : pythonIsoformat(facts.ended_at),
    task: facts.task ?? facts.prompt,
    model: facts.model,
    provider: providerOf(facts.model, facts.model_class),
    settings: settingsOf(facts, options),
    result: resultOf(facts),
    stats: statsOf(facts, timeline),
    timeline: timeline.entries,
  };
}

/** The report as written: JSON, indent 2, trailing newline. */
export function reportText(report: ReportJson): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
