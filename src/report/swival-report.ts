import type { RunFacts } from "./run-facts.js";

/** swival's report outcomes, plus `interrupted` for runs the user stopped. */
export type Outcome = "success" | "exhausted" | "interrupted" | "error";

/** A timeline entry (swival's `llm_call`, `tool_call`, `guardrail`, `truncated_response`). */
export type TimelineEntry = { turn: number; type: string } & Record<string, unknown>;

/** The run report, with swival's keys (`version` 1). */
export interface RunReport {
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

const round3 = (seconds: number) => Math.round(seconds * 1000) / 1000;
const roundOrNull = (seconds: number | null) => (seconds === null ? null : round3(seconds));

/** Python's `datetime.isoformat()` of a UTC time: microseconds and `+00:00`. */
export function isoTimestamp(unixSeconds: number): string {
  const micros = Math.round(unixSeconds * 1e6);
  const date = new Date(Math.floor(micros / 1000));
  const fraction = String(((micros % 1e6) + 1e6) % 1e6).padStart(6, "0");
  return `${date.toISOString().slice(0, 19)}.${fraction}+00:00`;
}

/** The outcome of an exit status: Submitted → success, limits → exhausted, stops → interrupted, else error. */
export function outcomeOf(exitStatus: string): Outcome {
  if (exitStatus === "Submitted") return "success";
  if (exitStatus === "LimitsExceeded" || exitStatus === "TimeExceeded") return "exhausted";
  if (exitStatus === "UserInterruption" || exitStatus === "Interrupted") return "interrupted";
  return "error";
}

const EXIT_CODES: Record<Outcome, number> = { success: 0, exhausted: 2, interrupted: 130, error: 1 };

/** The provider of a model name: its `provider/` prefix (OpenRouter for the openrouter model classes). */
export function providerOf(model: string | null, modelClass: string | null): string | null {
  if (modelClass?.startsWith("openrouter")) return "openrouter";
  if (!model?.includes("/")) return null;
  return model.slice(0, model.indexOf("/"));
}

function settingsOf(facts: RunFacts): Record<string, unknown> {
  const kwargs = facts.model_kwargs;
  const agent = facts.agent_config;
  const pick = (key: string) => (kwargs && kwargs[key] !== undefined ? kwargs[key] : null);
  const whitelist = agent && Array.isArray(agent.whitelist_actions) ? agent.whitelist_actions : null;
  const maxTokens = pick("max_tokens") ?? pick("max_completion_tokens");
  return {
    temperature: pick("temperature"),
    top_p: pick("top_p"),
    seed: pick("seed"),
    max_turns: agent && typeof agent.step_limit === "number" ? agent.step_limit : null,
    max_output_tokens: maxTokens,
    context_length: null,
    yolo: agent && typeof agent.mode === "string" ? agent.mode === "yolo" : null,
    allowed_commands: whitelist ? whitelist.map(String).sort() : null,
    skills_discovered: [],
    instructions_loaded: [],
  };
}

function errorMessageOf(facts: RunFacts): string {
  if (facts.error_message) return facts.error_message;
  if (facts.exit_status === "RepeatedFormatError") {
    return "RepeatedFormatError: the model's replies could not be run too many times in a row";
  }
  if (facts.exit_status === "") return "the trajectory records no end: the run is still going or was killed";
  return facts.exit_status;
}

/**
 * The swival-shaped report of one run: outcome, settings, aggregate stats and the action-by-action
 * timeline. Pure: the same facts give the same report. `endedAt` (Unix seconds) overrides the end time.
 */
export function buildReport(facts: RunFacts, options: { endedAt?: number } = {}): RunReport {
  const timeline: TimelineEntry[] = [];
  const byName: Record<string, { succeeded: number; failed: number }> = {};
  let llmCalls = 0;
  let llmTime: number | null = null;
  let toolTime: number | null = null;
  let succeeded = 0;
  let failed = 0;
  let guardrails = 0;
  let truncated = 0;
  const addTime = (total: number | null, seconds: number | null) =>
    seconds === null ? total : (total ?? 0) + seconds;
  const lastTurn = facts.turns.at(-1)?.turn;
  for (const turn of facts.turns) {
    turn.retries.forEach((retry, index) => {
      llmCalls += 1;
      llmTime = addTime(llmTime, retry.duration_s);
      timeline.push({
        turn: turn.turn,
        type: "llm_call",
        duration_s: roundOrNull(retry.duration_s),
        prompt_tokens_est: null,
        finish_reason: "error",
        is_retry: index > 0,
        ...(index > 0 ? { retry_reason: turn.retries[index - 1]?.error ?? "" } : {}),
        error: retry.error,
      });
    });
    llmCalls += 1;
    llmTime = addTime(llmTime, turn.duration_s);
    const retried = turn.retries.length > 0;
    timeline.push({
      turn: turn.turn,
      type: "llm_call",
      duration_s: roundOrNull(turn.duration_s),
      prompt_tokens_est: turn.prompt_tokens,
      finish_reason: turn.finish_reason,
      is_retry: retried,
      ...(retried ? { retry_reason: turn.retries.at(-1)?.error ?? "" } : {}),
    });
    if (turn.finish_reason === "length") {
      truncated += 1;
      timeline.push({ turn: turn.turn, type: "truncated_response" });
    }
    if (turn.format_error !== null) {
      guardrails += 1;
      const stop = turn.turn === lastTurn && facts.exit_status === "RepeatedFormatError";
      timeline.push({
        turn: turn.turn,
        type: "guardrail",
        level: stop ? "stop" : "nudge",
        error: turn.format_error,
      });
    }
    for (const call of turn.tool_calls) {
      const ok = !call.timed_out && (call.returncode === null ? !call.exception_info : call.returncode === 0);
      if (ok) succeeded += 1;
      else failed += 1;
      byName[call.name] ??= { succeeded: 0, failed: 0 };
      const counts = byName[call.name] as { succeeded: number; failed: number };
      if (ok) counts.succeeded += 1;
      else counts.failed += 1;
      toolTime = addTime(toolTime, call.duration_s);
      const error = call.exception_info || (call.returncode === null ? "" : `exit code ${call.returncode}`);
      timeline.push({
        turn: turn.turn,
        type: "tool_call",
        name: call.name,
        arguments: { command: call.command },
        succeeded: ok,
        duration_s: roundOrNull(call.duration_s),
        result_length: call.output.length,
        ...(ok ? {} : { error }),
      });
    }
  }
  const outcome = outcomeOf(facts.exit_status);
  const endedAt = options.endedAt ?? facts.ended_at;
  const result: RunReport["result"] = {
    outcome,
    answer: outcome === "error" ? null : facts.submission,
    exit_code: EXIT_CODES[outcome],
    ...(outcome === "error" ? { error_message: errorMessageOf(facts) } : {}),
  };
  return {
    version: 1,
    timestamp: endedAt === null ? null : isoTimestamp(endedAt),
    task: facts.task ?? facts.prompt,
    model: facts.model,
    provider: providerOf(facts.model, facts.model_class),
    settings: settingsOf(facts),
    result,
    stats: {
      turns: facts.turns.length,
      tool_calls_total: succeeded + failed,
      tool_calls_succeeded: succeeded,
      tool_calls_failed: failed,
      tool_calls_by_name: Object.fromEntries(
        Object.entries(byName).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      ),
      compactions: 0,
      turn_drops: 0,
      guardrail_interventions: guardrails,
      truncated_responses: truncated,
      // A call that never answered (interrupted, or failed for good) is counted by api_calls only.
      llm_calls: llmCalls + Math.max(0, (facts.api_calls ?? 0) - facts.turns.length),
      total_llm_time_s: roundOrNull(llmTime),
      total_tool_time_s: roundOrNull(toolTime),
    },
    timeline,
  };
}

/** The report as written: JSON, indent 2, trailing newline. */
export function reportText(report: RunReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
