import { expect } from "vitest";
import { CONTEXT_WINDOW } from "../helpers/seed-runs.js";
import { hasType, itemRow, type Json, type SeedCheck, type SeedOutputs, type SeedRow } from "./outputs.js";

const batchEvents = (o: SeedOutputs): Json[] => o.batch.run.events;
/** Every event of every run (single runs and the batch). */
const all = (o: SeedOutputs): Json[] => [
  ...Object.values(o.runs).flatMap((r) => r.run.events),
  ...batchEvents(o),
];
const ofType = (o: SeedOutputs, type: string) => all(o).filter((event) => event.type === type);
const events = (o: SeedOutputs, run: string): Json[] => o.runs[run]?.run.events ?? [];

/** An event type: emitted by these runs. */
function event(type: string, meaning: string, check?: SeedCheck): SeedRow {
  const holds = (o: SeedOutputs) => {
    expect(ofType(o, type).length, `no ${type}`).toBeGreaterThan(0);
  };
  return itemRow(`event:${type}`, "object", meaning, holds, check);
}

/** A root field of an event type: every such event has it with its type. */
function root(type: string, key: string, valueType: string, meaning: string, check?: SeedCheck): SeedRow {
  const holds = (o: SeedOutputs) => {
    const found = ofType(o, type);
    expect(found.length, `no ${type}`).toBeGreaterThan(0);
    for (const e of found)
      expect(hasType(e[key], valueType), `${type}.${key} = ${JSON.stringify(e[key])}`).toBe(true);
  };
  return itemRow(`${type}.${key}`, valueType, meaning, holds, check);
}

/** A usage key of agent_step/agent_stop (context keys only when the model's context window is known). */
function usage(key: string, valueType: string, meaning: string, check?: SeedCheck): SeedRow {
  const holds = (o: SeedOutputs) => {
    const found = events(o, "full").filter((e: Json) => e.type === "agent_step" || e.type === "agent_stop");
    expect(found.length).toBeGreaterThan(0);
    for (const e of found)
      expect(hasType(e.usage[key], valueType), `usage.${key} = ${e.usage[key]}`).toBe(true);
  };
  return itemRow(`usage.${key}`, valueType, meaning, holds, check);
}

const NO_DELEGATION = "swerun runs one agent per swarm: no agent delegates to another";
const NO_COMPRESSION = "swerun never compresses the conversation";
const NO_PLUGINS = "swerun agents have no plugin storage";

/** The full run's usages, in order (agent_step and agent_stop). */
const usages = (o: SeedOutputs) =>
  events(o, "full")
    .filter((e: Json) => e.type === "agent_step" || e.type === "agent_stop")
    .map((e: Json) => e.usage);

/** Seed 002 (SwarmSDK's event payloads) item by item, checked against `--events` of real runs. */
export const EVENTS_TABLE: Array<SeedRow> = [
  {
    item: "common.type",
    type: "string",
    meaning: "the event type",
    check: (o) => {
      for (const e of all(o)) expect(typeof e.type).toBe("string");
    },
  },
  {
    item: "common.timestamp",
    type: "string",
    meaning: "UTC ISO 8601 with microseconds",
    check: (o) => {
      for (const e of all(o)) expect(e.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    },
  },
  {
    item: "common.swarm_id",
    type: "string",
    meaning: "a run is swarm `main`; a batch is its run id, each instance the child `<run id>/<instance id>`",
    check: (o) => {
      for (const e of events(o, "full")) expect(e.swarm_id).toBe("main");
      const root = batchEvents(o)[0].swarm_id;
      const children = new Set(
        batchEvents(o)
          .filter((e: Json) => e.swarm_id !== root)
          .map((e: Json) => e.swarm_id),
      );
      expect([...children].sort()).toEqual(
        Object.keys(o.batch.trajectories)
          .map((id) => `${root}/${id}`)
          .sort(),
      );
    },
  },
  {
    item: "common.parent_swarm_id",
    type: "string",
    meaning: "the batch's swarm id for an instance's events; left out (null) for a root swarm",
    check: (o) => {
      const root = batchEvents(o)[0].swarm_id;
      for (const e of all(o)) {
        if (e.swarm_id === "main" || e.swarm_id === root) expect("parent_swarm_id" in e).toBe(false);
        else expect(e.parent_swarm_id).toBe(root);
      }
    },
  },
  {
    item: "common.agent",
    type: "string",
    meaning: "the agent: swerun",
    check: (o) => {
      for (const e of all(o)) expect(e.agent).toBe("swerun");
    },
  },
  event("swarm_start", "a run, a batch, or an instance of a batch starts", (o) => {
    for (const r of Object.values(o.runs)) expect(r.run.events[0]?.type).toBe("swarm_start");
  }),
  root("swarm_start", "swarm_name", "string", "`swerun run`, the batch's name, or the instance id", (o) => {
    expect(events(o, "full")[0].swarm_name).toBe("swerun run");
    const children = batchEvents(o).filter((e: Json) => e.type === "swarm_start" && e.parent_swarm_id);
    expect(children.map((e: Json) => e.swarm_name).sort()).toEqual(Object.keys(o.batch.trajectories).sort());
  }),
  root("swarm_start", "lead_agent", "string", "swerun"),
  root("swarm_start", "prompt", "string", "the task", (o) =>
    expect(events(o, "full")[0].prompt).toBe("greeting.txt should say hello, world"),
  ),
  event("swarm_stop", "the swarm ended (success or not)", (o) => {
    for (const r of Object.values(o.runs)) expect(r.run.events.at(-1)?.type, r.run.name).toBe("swarm_stop");
  }),
  root("swarm_stop", "swarm_name", "string", "as swarm_start"),
  root("swarm_stop", "lead_agent", "string", "swerun"),
  {
    item: "swarm_stop.last_agent",
    type: "string",
    meaning: "the agent that ran last; left out when no agent started (the error run)",
    check: (o) => expect(events(o, "full").at(-1).last_agent).toBe("swerun"),
  },
  {
    item: "swarm_stop.content",
    type: "string",
    meaning: "the submission, else the run's exit message; a batch: its status and exit status counts",
    check: (o) => expect(events(o, "full").at(-1).content).toBe("hello, world\n"),
  },
  root(
    "swarm_stop",
    "success",
    "boolean",
    "the run submitted (a batch: no instance ended with an error)",
    (o) => {
      expect(events(o, "full").at(-1).success).toBe(true);
      expect(events(o, "exhausted").at(-1).success).toBe(false);
    },
  ),
  root(
    "swarm_stop",
    "duration",
    "float",
    "seconds: a run's or an instance's wall time (the figure every output shows); a batch: from its start to its end",
    (o) => {
      const timing = o.runs.full?.trajectory.info.swerun_timing;
      expect(events(o, "full").at(-1).duration).toBe(Math.round(timing.wall_time_s * 1000) / 1000);
    },
  ),
  root("swarm_stop", "total_cost", "float", "USD of every model call", (o) => {
    const cost = o.runs.full?.trajectory.info.model_stats.instance_cost;
    expect(events(o, "full").at(-1).total_cost).toBeCloseTo(cost, 12);
  }),
  root(
    "swarm_stop",
    "total_tokens",
    "int",
    "the run's total tokens: input not read from or written to the cache plus output, over every call (a batch: summed over instances)",
    (o) => {
      const calls = events(o, "full").filter((e: Json) => e.type === "llm_api_response" && e.usage);
      const sum = calls.reduce((total: number, e: Json) => total + e.usage.total_tokens, 0);
      expect(events(o, "full").at(-1).total_tokens).toBe(sum);
      const stops = batchEvents(o).filter((e: Json) => e.type === "swarm_stop");
      const root = stops.find((e: Json) => e.parent_swarm_id === undefined);
      const children = stops.filter((e: Json) => e.parent_swarm_id !== undefined);
      expect(root.total_tokens).toBe(children.reduce((total: number, e: Json) => total + e.total_tokens, 0));
    },
  ),
  root("swarm_stop", "agents_involved", "array", "[swerun] (empty when no agent started)"),
  event("agent_start", "the agent loop starts"),
  root("agent_start", "swarm_name", "string", "as swarm_start"),
  root("agent_start", "model", "string", "the model name", (o) =>
    expect(events(o, "full").find((e: Json) => e.type === "agent_start").model).toBe("openai/test-model"),
  ),
  root("agent_start", "provider", "string", "the model's provider (a scripted model: its class)"),
  root("agent_start", "directory", "string", "the environment's working directory"),
  root("agent_start", "system_prompt", "string", "the rendered system prompt"),
  root("agent_start", "tools", "array", "[bash]", (o) => {
    for (const e of ofType(o, "agent_start")) expect(e.tools).toEqual(["bash"]);
  }),
  root("agent_start", "delegates_to", "array", `always []: ${NO_DELEGATION}`),
  { item: "agent_start.plugin_storages", type: "object", meaning: "plugin storage", notProduced: NO_PLUGINS },
  root("agent_start", "is_delegation_instance", "boolean", `always false: ${NO_DELEGATION}`),
  {
    item: "agent_start.base_agent",
    type: "string",
    meaning: "the delegation instance's agent",
    notProduced: NO_DELEGATION,
  },
  event("agent_stop", "the agent ended (its final event, whatever ended it)"),
  root("agent_stop", "model", "string", "the model name"),
  root("agent_stop", "content", "string", "the submission, else the exit message"),
  {
    item: "agent_stop.tool_calls",
    type: "null",
    meaning: "always nil: left out, as SwarmSDK leaves out nil keys",
    check: (o) => {
      for (const e of ofType(o, "agent_stop")) expect("tool_calls" in e).toBe(false);
    },
  },
  root(
    "agent_stop",
    "finish_reason",
    "string",
    "finish_swarm when the agent submitted (it ends the swarm), else stop",
    (o) => {
      expect(events(o, "full").find((e: Json) => e.type === "agent_stop").finish_reason).toBe("finish_swarm");
      expect(events(o, "limit").find((e: Json) => e.type === "agent_stop").finish_reason).toBe("stop");
    },
  ),
  {
    item: "agent_stop.usage",
    type: "object",
    meaning: "the last call's usage (see usage.*); absent before any call",
    check: (o) => expect(events(o, "full").find((e: Json) => e.type === "agent_stop").usage).toBeDefined(),
  },
  {
    item: "agent_stop.tool_executions",
    type: "null",
    meaning: "nil (left out): swerun reports each command as tool_call/tool_result",
    check: (o) => {
      for (const e of ofType(o, "agent_stop")) expect("tool_executions" in e).toBe(false);
    },
  },
  root("agent_stop", "metadata", "object", "swerun's cost and api_calls of the run"),
  usage("input_tokens", "int", "the call's input tokens not read from or written to the cache", (o) =>
    expect(usages(o).map((u: Json) => u.input_tokens)).toEqual([1000, 3300, 3500, 3700, 3700]),
  ),
  usage("output_tokens", "int", "the call's completion tokens"),
  usage("total_tokens", "int", "input + output of the call"),
  usage("input_cost", "float", "USD of its input at the model's prices"),
  usage("output_cost", "float", "USD of its output"),
  usage("total_cost", "float", "USD of the call"),
  usage(
    "cumulative_input_tokens",
    "int",
    "the last call's prompt tokens, cache included (the conversation so far, as SwarmSDK measures the context)",
  ),
  usage("cumulative_output_tokens", "int", "completion tokens of every call so far"),
  usage("cumulative_total_tokens", "int", "cumulative input + cumulative output"),
  usage("context_limit", "int", "the model's context window", (o) => {
    for (const u of usages(o)) expect(u.context_limit).toBe(CONTEXT_WINDOW);
  }),
  usage(
    "tokens_used_percentage",
    "string",
    "cumulative total / context limit, SwarmSDK's style (`96.5%`)",
    (o) => {
      for (const u of usages(o)) {
        const value = Math.round((u.cumulative_total_tokens / CONTEXT_WINDOW) * 10000) / 100;
        expect(u.tokens_used_percentage).toBe(`${Number.isInteger(value) ? value.toFixed(1) : value}%`);
      }
    },
  ),
  usage("tokens_remaining", "int", "context limit − cumulative total", (o) => {
    for (const u of usages(o)) expect(u.tokens_remaining).toBe(CONTEXT_WINDOW - u.cumulative_total_tokens);
  }),
  event("agent_step", "a reply with tool calls"),
  root("agent_step", "model", "string", "the model name"),
  root("agent_step", "content", "string", "the reply's text"),
  root("agent_step", "tool_calls", "array", "{id, name: bash, arguments: {command}} per command"),
  root("agent_step", "finish_reason", "string", "always tool_calls", (o) => {
    for (const e of ofType(o, "agent_step")) expect(e.finish_reason).toBe("tool_calls");
  }),
  {
    item: "agent_step.usage",
    type: "object",
    meaning: "the call's usage (see usage.*)",
    check: (o) => {
      for (const e of events(o, "full").filter((x: Json) => x.type === "agent_step"))
        expect(e.usage).toBeDefined();
    },
  },
  root("agent_step", "tool_executions", "array", "always []: results come as tool_result"),
  root("agent_step", "metadata", "object", "{}"),
  event("user_prompt", "once per agent, before its first model call: the task prompt it sends", (o) => {
    expect(events(o, "full").filter((e: Json) => e.type === "user_prompt")).toHaveLength(1);
  }),
  root("user_prompt", "model", "string", "the model name"),
  root("user_prompt", "provider", "string", "its provider"),
  root("user_prompt", "message_count", "int", "messages in the conversation so far"),
  root("user_prompt", "tools", "array", "[bash]"),
  root("user_prompt", "delegates_to", "array", `always []: ${NO_DELEGATION}`),
  root("user_prompt", "source", "string", "always user"),
  root("user_prompt", "metadata", "object", "the full context, with the prompt"),
  ...["prompt", "message_count", "model", "provider", "tools", "delegates_to", "source", "timestamp"].map(
    (key): SeedRow => ({
      item: `user_prompt.metadata.${key}`,
      type: "unknown",
      meaning: key === "prompt" ? "the user message sent (the rendered task prompt)" : `as the root's ${key}`,
      check: (o) => {
        for (const e of ofType(o, "user_prompt")) {
          if (key === "prompt")
            expect(e.metadata.prompt).toContain(
              e.swarm_id === "main" && e.model !== "deterministic/demo"
                ? "greeting.txt should say hello, world"
                : "",
            );
          else if (key === "timestamp")
            expect(e.metadata.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
          else expect(e.metadata[key]).toEqual(e[key]);
        }
      },
    }),
  ),
  event("tool_call", "before a command runs"),
  root("tool_call", "tool_call_id", "string", "the model's tool call id (call_<n> for text-based replies)"),
  root("tool_call", "tool", "string", "bash"),
  root("tool_call", "arguments", "object", "{command}"),
  root("tool_call", "metadata", "object", "{step}"),
  event("tool_result", "after a command ran"),
  root("tool_result", "tool_call_id", "string", "matches its tool_call"),
  root("tool_result", "tool", "string", "bash"),
  root("tool_result", "result", "string", "the output as the model saw it (before templating)"),
  root("tool_result", "metadata", "object", "{step, returncode, duration, exception_info}", (o) => {
    const sleep = events(o, "full").find(
      (e: Json) => e.type === "tool_result" && e.tool_call_id === "call_4",
    );
    expect(sleep.metadata.returncode).toBe(-1);
    expect(sleep.metadata.exception_info).toMatch(/timed out/);
  }),
  event("model_lookup_warning", "the model's price or context window is unknown", (o) => {
    expect(events(o, "exhausted").some((e: Json) => e.type === "model_lookup_warning")).toBe(true);
  }),
  root("model_lookup_warning", "model", "string", "the model name"),
  root("model_lookup_warning", "error_message", "string", "what is not known"),
  root("model_lookup_warning", "suggestions", "array", "always []"),
  event(
    "context_limit_warning",
    "the conversation crossed 60, 80, 90 or 95% of the context window (each once)",
    (o) => {
      expect(
        events(o, "full")
          .filter((e: Json) => e.type === "context_limit_warning")
          .map((e: Json) => e.threshold),
      ).toEqual(["60%", "80%", "90%", "95%"]);
    },
  ),
  root("context_limit_warning", "model", "string", "the model name"),
  root("context_limit_warning", "threshold", "string", "the threshold crossed"),
  root(
    "context_limit_warning",
    "current_usage",
    "string",
    "the usage's tokens_used_percentage at that point",
  ),
  root("context_limit_warning", "tokens_used", "int", "the cumulative total at that point", (o) => {
    const totals = events(o, "full")
      .filter((e: Json) => e.usage && ["agent_step", "agent_stop", "format_error"].includes(e.type))
      .map((e: Json) => e.usage.cumulative_total_tokens);
    for (const e of events(o, "full").filter((x: Json) => x.type === "context_limit_warning")) {
      expect(totals).toContain(e.tokens_used);
      expect(e.tokens_remaining).toBe(CONTEXT_WINDOW - e.tokens_used);
    }
  }),
  root("context_limit_warning", "tokens_remaining", "int", "context limit − tokens used"),
  root("context_limit_warning", "context_limit", "int", "the context window"),
  root("context_limit_warning", "metadata", "object", "{}"),
  ...["tool_call_id", "delegate_to", "arguments", "metadata"].map((key) => ({
    item: `agent_delegation.${key}`,
    type: "unknown",
    meaning: key,
    notProduced: NO_DELEGATION,
  })),
  { item: "event:agent_delegation", type: "object", meaning: "a delegation", notProduced: NO_DELEGATION },
  ...["delegate_from", "tool_call_id", "result", "metadata"].map((key) => ({
    item: `delegation_result.${key}`,
    type: "unknown",
    meaning: key,
    notProduced: NO_DELEGATION,
  })),
  {
    item: "event:delegation_result",
    type: "object",
    meaning: "a delegation's result",
    notProduced: NO_DELEGATION,
  },
  ...["target", "call_stack"].map((key) => ({
    item: `delegation_circular_dependency.${key}`,
    type: "unknown",
    meaning: key,
    notProduced: NO_DELEGATION,
  })),
  {
    item: "event:delegation_circular_dependency",
    type: "object",
    meaning: "a delegation cycle",
    notProduced: NO_DELEGATION,
  },
  { item: "event:context_compression", type: "object", meaning: "compression", notProduced: NO_COMPRESSION },
  ...[
    "total_messages",
    "messages_compressed",
    "tokens_before",
    "current_usage",
    "compression_strategy",
    "keep_recent",
  ].map((key) => ({
    item: `context_compression.${key}`,
    type: "unknown",
    meaning: key,
    notProduced: NO_COMPRESSION,
  })),
  event("llm_retry_attempt", "a model request failed and is tried again", (o) => {
    expect(events(o, "full").filter((e: Json) => e.type === "llm_retry_attempt")).toHaveLength(1);
    expect(events(o, "exhausted").filter((e: Json) => e.type === "llm_retry_attempt")).toHaveLength(1);
  }),
  root("llm_retry_attempt", "model", "string", "the model name"),
  root("llm_retry_attempt", "attempt", "int", "the attempt that failed, from 1"),
  root("llm_retry_attempt", "max_retries", "int", "attempts allowed in all (model.retry_attempts)", (o) => {
    expect(events(o, "exhausted").find((e: Json) => e.type === "llm_retry_attempt").max_retries).toBe(2);
  }),
  root("llm_retry_attempt", "error_class", "string", "the failure's class", (o) => {
    for (const e of ofType(o, "llm_retry_attempt")) expect(e.error_class).toBe("InternalServerError");
  }),
  root("llm_retry_attempt", "error_message", "string", "what failed (HTTP 503: ...)"),
  root("llm_retry_attempt", "retry_delay", "float", "seconds before the next attempt"),
  event("llm_retry_exhausted", "every attempt failed: the run ends", (o) => {
    const exhausted = events(o, "exhausted");
    expect(exhausted.filter((e: Json) => e.type === "llm_retry_exhausted")).toHaveLength(1);
    expect(exhausted.some((e: Json) => e.type === "internal_error" || e.type === "model_retry")).toBe(false);
  }),
  root("llm_retry_exhausted", "model", "string", "the model name"),
  root("llm_retry_exhausted", "attempts", "int", "attempts made", (o) =>
    expect(ofType(o, "llm_retry_exhausted")[0].attempts).toBe(2),
  ),
  root("llm_retry_exhausted", "error_class", "string", "the last failure's class"),
  root("llm_retry_exhausted", "error_message", "string", "the last failure"),
  event("llm_api_request", "before each HTTP request to the model's API (scripted models make none)", (o) => {
    for (const r of Object.values(o.runs))
      expect(r.run.events.filter((e: Json) => e.type === "llm_api_request").length, r.run.name).toBe(
        r.run.requests,
      );
  }),
  root("llm_api_request", "provider", "string", "openai"),
  root(
    "llm_api_request",
    "body",
    "object",
    "the request as sent (model, messages, tools, parameters)",
    (o) => {
      for (const e of ofType(o, "llm_api_request")) {
        expect(e.body.messages.length).toBeGreaterThan(1);
        expect(e.body.temperature).toBe(0.2);
      }
    },
  ),
  event("llm_api_response", "after each HTTP response with a body the client could read"),
  root("llm_api_response", "provider", "string", "openai"),
  root("llm_api_response", "body", "object", "the response as received"),
  root("llm_api_response", "duration_seconds", "float", "request to response"),
  root(
    "llm_api_response",
    "usage",
    "object",
    "{input_tokens, output_tokens, total_tokens} of the body's usage, counted as every usage (input: not read from or written to the cache)",
  ),
  ...["input_tokens", "output_tokens", "total_tokens"].map((key) => ({
    item: `llm_api_response.usage.${key}`,
    type: "int",
    meaning: `the body's usage: ${key}`,
    check: (o: SeedOutputs) => {
      for (const e of ofType(o, "llm_api_response")) expect(Number.isInteger(e.usage[key])).toBe(true);
    },
  })),
  root("llm_api_response", "model", "string", "the body's model"),
  root("llm_api_response", "finish_reason", "string", "the body's finish reason"),
];
