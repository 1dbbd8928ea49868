import { expect } from "vitest";
import { CONTEXT_WINDOW } from "../helpers/seed-runs.js";
import { hasType, itemRow, type Json, type SeedCheck, type SeedOutputs, type SeedRow } from "./outputs.js";

/** Every report (the live one and the later one) of every single run, with its run. */
const reports = (o: SeedOutputs) =>
  Object.values(o.runs).flatMap((r) => [
    { r, report: r.report },
    { r, report: r.later },
  ]);
const timeline = (report: Json, type: string): Json[] => report.timeline.filter((e: Json) => e.type === type);
const at = (report: Json, path: string) => path.split(".").reduce((value, key) => value?.[key], report);

/** A documented field: every report has it with its type, unless `nullable` says when it is null. */
function field(item: string, type: string, meaning: string, check?: SeedCheck): SeedRow {
  const holds = (o: SeedOutputs) => {
    for (const { r, report } of reports(o)) {
      const value = at(report, item);
      if (item === "result.error_message" && report.result.outcome !== "error") {
        expect(value, r.run.name).toBeUndefined();
        continue;
      }
      expect(hasType(value, type), `${r.run.name}: ${item} = ${JSON.stringify(value)} is not ${type}`).toBe(
        true,
      );
    }
  };
  return itemRow(item, type, meaning, holds, check);
}

/** A documented timeline entry field: every entry of that type has it with its type. */
function entry(type: string, key: string, valueType: string, meaning: string, check?: SeedCheck): SeedRow {
  const holds = (o: SeedOutputs) => {
    const entries = reports(o).flatMap(({ report }) => timeline(report, type));
    expect(entries.length, `no ${type} entries`).toBeGreaterThan(0);
    for (const e of entries) {
      if (key === "error" && e.succeeded !== false) continue;
      expect(hasType(e[key], valueType), `${JSON.stringify(e)}: ${key} is not ${valueType}`).toBe(true);
    }
  };
  return itemRow(`timeline:${type}.${key}`, valueType, meaning, holds, check);
}

const NO_COMPACTION = "swerun never trims the conversation: it has no context compaction or turn dropping";

/** Seed 000 (swival's `--report`) item by item, checked against `--report` and `swerun report` of real runs. */
export const REPORT_TABLE: Array<SeedRow> = [
  field("version", "int", "schema version, 1", (o) => {
    for (const { report } of reports(o)) expect(report.version).toBe(1);
  }),
  field("timestamp", "string", "UTC ISO 8601 time the run ended (the trajectory's recorded end)", (o) => {
    for (const r of Object.values(o.runs)) {
      expect(r.report.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/);
      // --report and a later `swerun report` of the same run say the same
      expect(r.later.timestamp, r.run.name).toBe(r.report.timestamp);
      const ended = r.trajectory.info.swerun_timing.ended_at;
      expect(Date.parse(r.report.timestamp) / 1000).toBeCloseTo(ended, 2);
    }
  }),
  field("task", "string", "the task given with -t", (o) => {
    for (const { report } of reports(o))
      if (report.model !== "deterministic/demo")
        expect(report.task).toBe("greeting.txt should say hello, world");
  }),
  field("model", "string", "the model name", (o) => {
    expect(o.runs.full?.report.model).toBe("openai/test-model");
    expect(o.runs.scripted?.report.model).toBe("deterministic/demo");
  }),
  {
    item: "provider",
    type: "string or null",
    meaning:
      "the model name's provider prefix (`deterministic` for the scripted demo); null for a name without one",
    check: (o) => {
      expect(o.runs.full?.report.provider).toBe("openai");
      expect(o.runs.scripted?.report.provider).toBe("deterministic");
    },
  },
  field("settings", "object", "configuration snapshot"),
  field(
    "settings.temperature",
    "float",
    "model_kwargs.temperature; the provider's default (1) when the config leaves it unset; 0 for a model that does not sample (scripted)",
    (o) => {
      expect(o.runs.full?.report.settings.temperature).toBe(0.2);
      expect(o.runs.scripted?.report.settings.temperature).toBe(0);
    },
  ),
  field("settings.top_p", "float", "model_kwargs.top_p; the provider's default (1) when not set", (o) => {
    expect(o.runs.full?.report.settings.top_p).toBe(1);
    expect(o.runs.scripted?.report.settings.top_p).toBe(1);
  }),
  field("settings.seed", "int or null", "model_kwargs.seed, if set"),
  field("settings.max_turns", "int", "agent.step_limit (0: no limit)", (o) => {
    expect(o.runs.limit?.report.settings.max_turns).toBe(1);
    expect(o.runs.full?.report.settings.max_turns).toBe(0);
  }),
  field(
    "settings.max_output_tokens",
    "int",
    "model_kwargs.max_tokens (or max_completion_tokens); else the model's own limit (its registry entry's max_output_tokens); 0 when neither is known (no limit sent)",
    (o) => {
      expect(o.runs.full?.report.settings.max_output_tokens).toBe(256);
      expect(o.runs.scripted?.report.settings.max_output_tokens).toBe(0);
    },
  ),
  field(
    "settings.context_length",
    "int or null",
    "the model's context window as its price data knows it",
    (o) => {
      expect(o.runs.full?.report.settings.context_length).toBe(CONTEXT_WINDOW);
      expect(o.runs.full?.later.settings.context_length).toBe(CONTEXT_WINDOW);
      expect(o.runs.exhausted?.report.settings.context_length).toBe(null); // a model no price data knows
    },
  ),
  field("settings.yolo", "bool", "agent.mode is yolo", (o) => {
    for (const { report } of reports(o)) expect(report.settings.yolo).toBe(true);
  }),
  field("settings.allowed_commands", "string[]", "agent.whitelist_actions, sorted"),
  field("settings.skills_discovered", "string[]", "always empty: swerun has no skills"),
  field("settings.instructions_loaded", "string[]", "always empty: swerun loads no instruction files"),
  field("result", "object", "outcome and answer"),
  field(
    "result.outcome",
    "string",
    "success (submitted), exhausted (a step, cost or time limit), error",
    (o) => {
      const outcome = (name: string) => o.runs[name]?.report.result.outcome;
      expect(["full", "scripted"].map(outcome)).toEqual(["success", "success"]);
      expect(["limit", "timelimit"].map(outcome)).toEqual(["exhausted", "exhausted"]);
      expect(["exhausted", "error", "interrupted", "repeated"].map(outcome)).toEqual([
        "error",
        "error",
        "error",
        "error",
      ]);
    },
  ),
  {
    item: "outcome:success",
    type: "string",
    meaning: "the agent submitted",
    check: (o) => expect(o.runs.full?.report.result.outcome).toBe("success"),
  },
  {
    item: "outcome:exhausted",
    type: "string",
    meaning: "a limit ended the run",
    check: (o) => expect(o.runs.limit?.report.result.outcome).toBe("exhausted"),
  },
  {
    item: "outcome:error",
    type: "string",
    meaning: "an error, repeated format errors or an interruption ended the run",
    check: (o) => expect(o.runs.error?.report.result.outcome).toBe("error"),
  },
  field("result.answer", "string or null", "the submission; null on error", (o) => {
    for (const r of Object.values(o.runs)) {
      const answer = r.report.result.outcome === "error" ? null : r.trajectory.info.submission;
      expect(r.report.result.answer, r.run.name).toBe(answer);
    }
  }),
  field("result.exit_code", "int", "the exit code of the swerun process that ran it", (o) => {
    for (const r of Object.values(o.runs)) {
      expect(r.report.result.exit_code, r.run.name).toBe(r.run.code);
      expect(r.later.result.exit_code, r.run.name).toBe(r.run.code);
    }
    expect(o.runs.exhausted?.run.code).toBe(2);
    expect(o.runs.error?.run.code).toBe(1);
    expect(o.runs.limit?.run.code).toBe(0);
  }),
  field(
    "result.error_message",
    "string",
    "present only when the outcome is error: what ended the run",
    (o) => {
      expect(o.runs.exhausted?.report.result.error_message).toMatch(/failed 2 times/);
      expect(o.runs.error?.report.result.error_message).toMatch(/env_startup_command/);
    },
  ),
  field("stats", "object", "aggregate counters"),
  field("stats.turns", "int", "model calls that returned a reply", (o) => {
    for (const r of Object.values(o.runs)) {
      const replies = r.report.timeline.filter(
        (e: Json) => e.type === "llm_call" && e.finish_reason !== "error",
      );
      expect(r.report.stats.turns, r.run.name).toBe(replies.length);
    }
    expect(o.runs.full?.report.stats.turns).toBe(6);
  }),
  field("stats.llm_calls", "int", "every model API request, failed attempts included", (o) => {
    for (const r of Object.values(o.runs)) {
      if (r.run.name === "scripted") expect(r.report.stats.llm_calls).toBe(r.report.stats.turns);
      else expect(r.report.stats.llm_calls, r.run.name).toBe(r.run.requests);
    }
    expect(o.runs.exhausted?.report.stats.llm_calls).toBe(2);
  }),
  field("stats.total_llm_time_s", "float", "seconds in model calls, failed attempts included", (o) => {
    for (const { r, report } of reports(o)) {
      const sum = timeline(report, "llm_call").reduce((total, e) => total + e.duration_s, 0);
      expect(report.stats.total_llm_time_s, r.run.name).toBeCloseTo(sum, 2);
    }
    expect(o.runs.exhausted?.report.stats.total_llm_time_s).toBeGreaterThan(0);
  }),
  field("stats.total_tool_time_s", "float", "seconds running commands", (o) => {
    for (const { r, report } of reports(o)) {
      const sum = timeline(report, "tool_call").reduce((total, e) => total + (e.duration_s ?? 0), 0);
      expect(report.stats.total_tool_time_s, r.run.name).toBeCloseTo(sum, 2);
    }
  }),
  field("stats.tool_calls_total", "int", "tool_call entries", (o) => {
    for (const { report } of reports(o))
      expect(report.stats.tool_calls_total).toBe(timeline(report, "tool_call").length);
  }),
  field("stats.tool_calls_succeeded", "int", "tool calls that succeeded (exit code 0, in time)", (o) => {
    for (const { report } of reports(o))
      expect(report.stats.tool_calls_succeeded).toBe(
        timeline(report, "tool_call").filter((e) => e.succeeded).length,
      );
  }),
  field(
    "stats.tool_calls_failed",
    "int",
    "tool calls that failed (timeout, non-zero exit, invalid JSON)",
    (o) => {
      for (const { report } of reports(o))
        expect(report.stats.tool_calls_failed).toBe(
          timeline(report, "tool_call").filter((e) => !e.succeeded).length,
        );
      // sleep (timeout), grep (exit 1), the tool call with invalid JSON
      expect(o.runs.full?.report.stats.tool_calls_failed).toBe(3);
    },
  ),
  field("stats.tool_calls_by_name", "object", "succeeded/failed per program name", (o) => {
    for (const { report } of reports(o)) {
      const counts: Record<string, { succeeded: number; failed: number }> = {};
      for (const e of timeline(report, "tool_call")) {
        counts[e.name] ??= { succeeded: 0, failed: 0 };
        (counts[e.name] as { succeeded: number; failed: number })[e.succeeded ? "succeeded" : "failed"] += 1;
      }
      expect(report.stats.tool_calls_by_name).toEqual(counts);
    }
  }),
  field("stats.compactions", "int", `always 0: ${NO_COMPACTION}`),
  field("stats.turn_drops", "int", `always 0: ${NO_COMPACTION}`),
  field(
    "stats.guardrail_interventions",
    "int",
    "guardrail entries: identical format errors in a row",
    (o) => {
      expect(o.runs.full?.report.stats.guardrail_interventions).toBe(0); // two format errors, not alike
      expect(o.runs.repeated?.report.stats.guardrail_interventions).toBe(2);
      for (const { report } of reports(o))
        expect(report.stats.guardrail_interventions).toBe(timeline(report, "guardrail").length);
    },
  ),
  field(
    "stats.truncated_responses",
    "int",
    "replies cut at the output token limit (finish_reason length)",
    (o) => {
      expect(o.runs.full?.report.stats.truncated_responses).toBe(1);
    },
  ),
  field("timeline", "array", "every model call, tool call, guardrail and truncation, in order"),
  {
    item: "timeline:llm_call",
    type: "object",
    meaning: "one per model API request, failed attempts included",
    check: (o) => {
      const calls = timeline(o.runs.full?.report, "llm_call");
      expect(calls.slice(0, 2).map((e) => [e.turn, e.finish_reason, e.is_retry])).toEqual([
        [1, "error", false],
        [1, "tool_calls", false],
      ]);
      expect(timeline(o.runs.exhausted?.report, "llm_call").map((e) => e.finish_reason)).toEqual([
        "error",
        "error",
      ]);
    },
  },
  entry("llm_call", "duration_s", "float", "seconds the request took"),
  entry(
    "llm_call",
    "prompt_tokens_est",
    "int or null",
    "prompt tokens (the provider's count); null when not known",
    (o) => {
      expect(timeline(o.runs.full?.report, "llm_call").map((e) => e.prompt_tokens_est)).toEqual([
        1000, 1000, 2500, 2600, 3300, 3500, 3700,
      ]);
    },
  ),
  entry(
    "llm_call",
    "finish_reason",
    "string",
    "the provider's finish reason; error for a failed attempt",
    (o) => {
      // the scripted model records none: tool_calls (its replies carry commands in the text: stop)
      for (const e of timeline(o.runs.scripted?.report, "llm_call")) expect(e.finish_reason).toBe("stop");
    },
  ),
  entry(
    "llm_call",
    "is_retry",
    "bool",
    "false: the seed keeps it for a call retried after a compaction, which swerun never does; a retried HTTP request is a failed llm_call of its own",
    (o) => {
      for (const { report } of reports(o))
        for (const e of timeline(report, "llm_call")) expect(e.is_retry).toBe(false);
    },
  ),
  {
    item: "timeline:llm_call.retry_reason",
    type: "string",
    meaning: "the compaction that produced a retried request",
    notProduced: NO_COMPACTION,
  },
  {
    item: "timeline:tool_call",
    type: "object",
    meaning: "one per command (named after its program), and per tool call whose arguments were invalid JSON",
    check: (o) => {
      const calls = timeline(o.runs.full?.report, "tool_call");
      expect(calls.map((e) => [e.turn, e.name, e.succeeded])).toEqual([
        [1, "cat", true],
        [2, "bash", false],
        [4, "sleep", false],
        [5, "printf", true],
        [5, "grep", false],
        [6, "echo", true],
      ]);
    },
  },
  entry("tool_call", "name", "string", "the command's program (bash for a tool call that could not be read)"),
  entry(
    "tool_call",
    "arguments",
    "object or null",
    "{command}; null when the model produced invalid JSON",
    (o) => {
      const calls = timeline(o.runs.full?.report, "tool_call");
      expect(calls[0]?.arguments).toEqual({ command: "cat greeting.txt" });
      expect(calls[1]?.arguments).toBe(null);
    },
  ),
  entry("tool_call", "succeeded", "bool", "exit code 0 and in time"),
  entry(
    "tool_call",
    "duration_s",
    "float or null",
    "seconds it ran (the submitting command's too); null when the trajectory records no time",
    (o) => {
      const calls = timeline(o.runs.full?.report, "tool_call");
      expect(calls.at(-1)).toMatchObject({ name: "echo", succeeded: true });
      expect(calls.at(-1)?.duration_s).toBeGreaterThanOrEqual(0);
    },
  ),
  entry("tool_call", "result_length", "int", "characters of its output"),
  entry("tool_call", "error", "string", "present when it failed: why", (o) => {
    const calls = timeline(o.runs.full?.report, "tool_call");
    expect(calls[2]?.error).toMatch(/timed out/);
    expect(calls[4]?.error).toBe("exit code 1");
    for (const e of calls) expect("error" in e).toBe(!e.succeeded);
  }),
  { item: "timeline:compaction", type: "object", meaning: "context recovery", notProduced: NO_COMPACTION },
  { item: "timeline:compaction.strategy", type: "string", meaning: "how", notProduced: NO_COMPACTION },
  {
    item: "timeline:compaction.tokens_before",
    type: "int",
    meaning: "tokens before",
    notProduced: NO_COMPACTION,
  },
  {
    item: "timeline:compaction.tokens_after",
    type: "int",
    meaning: "tokens after",
    notProduced: NO_COMPACTION,
  },
  {
    item: "timeline:guardrail",
    type: "object",
    meaning: "the agent repeated the same failing call: a format error identical to the one before",
    check: (o) => {
      expect(timeline(o.runs.full?.report, "guardrail")).toEqual([]);
      expect(timeline(o.runs.repeated?.report, "guardrail").map((e) => e.turn)).toEqual([2, 3]);
    },
  },
  entry("guardrail", "tool", "string", "the tool the failing call asked for (swerun's one tool, bash)"),
  entry(
    "guardrail",
    "level",
    "string",
    "nudge at the second identical error in a row, stop from the third",
    (o) => {
      const levels = timeline(o.runs.repeated?.report, "guardrail").map((e) => e.level);
      expect(levels).toEqual(["nudge", "stop"]);
    },
  ),
  {
    item: "timeline:truncated_response",
    type: "object",
    meaning: "a reply cut at the output token limit",
    check: (o) =>
      expect(timeline(o.runs.full?.report, "truncated_response")).toEqual([
        { turn: 3, type: "truncated_response" },
      ]),
  },
];
