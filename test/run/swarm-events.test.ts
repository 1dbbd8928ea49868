import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { describeModel } from "../../src/models/model-facts.js";
import { runTask } from "../../src/run/run.js";
import { isoTimestamp } from "../../src/run/swarm-event-fields.js";
import { SwarmEventStream } from "../../src/run/swarm-events.js";
import { MemorySink } from "../../src/util/jsonl-sink.js";
import { completion, TEST_KEY, TEST_PRICES, toolCall, useOpenAIServer } from "../helpers/openai-server.js";
import { tempDir } from "../helpers/tmp.js";

const server = useOpenAIServer({ OPENAI_API_KEY: TEST_KEY });

const SUBMIT_COMMAND = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && echo the-patch";
const usage = (prompt: number, completionTokens: number) => ({
  prompt_tokens: prompt,
  completion_tokens: completionTokens,
  total_tokens: prompt + completionTokens,
});

/** The default tool-call config against the test server, prices and a 1000-token context window registered. */
function config(dir: string, registry: Record<string, unknown> = TEST_PRICES) {
  const prices = join(dir, "prices.json");
  writeFileSync(prices, JSON.stringify(registry));
  return loadConfig([
    "default",
    "agent.mode=yolo",
    `environment.cwd=${dir}`,
    "environment.timeout=1",
    "model.model_name=openai/test-model",
    `model.model_kwargs.api_base=${server.url}`,
    `model.litellm_model_registry=${prices}`,
    "model.retry_min_wait=0.01",
    "model.retry_max_wait=0.02",
  ]);
}

/** A scripted run through the pipeline with its events mapped onto a sink in memory. */
async function scriptedRun(dir: string, registry?: Record<string, unknown>) {
  const runConfig = config(dir, registry);
  const sink = new MemorySink();
  const stream = new SwarmEventStream({
    sink,
    swarmId: "main",
    executionId: "run-1",
    models: [await describeModel(runConfig.model)],
  });
  stream.start("fix the bug");
  const result = await runTask("fix the bug", {
    config: runConfig,
    runId: "run-1",
    subscribers: [stream.listener],
  });
  stream.stop({ success: result.exit_status === "Submitted", error: result.error });
  return { result, records: sink.records };
}

const byType = (records: Record<string, unknown>[], type: string) => records.filter((r) => r.type === type);

describe("the SwarmSDK-shaped event stream of a run", () => {
  it("maps tool calls, a retry, a format error, a timeout and a submission to the exact event sequence", async () => {
    const dir = tempDir();
    server.push(
      {
        body: completion({ toolCalls: [toolCall("call_a", { command: "echo hi" })], usage: usage(500, 20) }),
      },
      { status: 500, body: { error: { message: "overloaded" } } },
      { body: completion({ content: "I am done.", usage: usage(650, 10) }) },
      { body: completion({ toolCalls: [toolCall("call_b", { command: "sleep 5" })], usage: usage(850, 5) }) },
      {
        body: completion({
          content: "Submitting.",
          toolCalls: [toolCall("call_c", { command: SUBMIT_COMMAND })],
          usage: usage(900, 30),
        }),
      },
    );
    const run = await scriptedRun(dir, {
      "openai/test-model": { ...TEST_PRICES["openai/test-model"], max_input_tokens: 1000 },
    });
    const result = run.result;
    let records = run.records;
    expect(result.exit_status).toBe("Submitted");
    const api = records.filter((r) => String(r.type).startsWith("llm_api_"));
    expect(api.map((r) => r.type)).toEqual([
      "llm_api_request",
      "llm_api_response",
      "llm_api_request",
      "llm_api_request",
      "llm_api_response",
      "llm_api_request",
      "llm_api_response",
      "llm_api_request",
      "llm_api_response",
    ]);
    expect(api[0]).toMatchObject({ provider: "openai", body: { model: "test-model" } });
    expect((api[0]?.body as { messages?: unknown[] } | undefined)?.messages).toHaveLength(2);
    expect(api[1]).toMatchObject({
      provider: "openai",
      model: "test-model",
      finish_reason: "tool_calls",
      usage: { input_tokens: 500, output_tokens: 20, total_tokens: 520 },
      body: { id: "chatcmpl-test", object: "chat.completion" },
    });
    expect(typeof api[1]?.duration_seconds).toBe("number");
    records = records.filter((r) => !String(r.type).startsWith("llm_api_"));
    expect(records.map((r) => r.type)).toEqual([
      "swarm_start",
      "agent_start",
      "user_prompt",
      "agent_step",
      "tool_call",
      "tool_result",
      "llm_retry_attempt",
      "format_error",
      "context_limit_warning",
      "agent_step",
      "context_limit_warning",
      "tool_call",
      "tool_result",
      "agent_step",
      "context_limit_warning",
      "context_limit_warning",
      "tool_call",
      "tool_result",
      "agent_stop",
      "swarm_stop",
    ]);
    for (const record of records) {
      expect(record).toMatchObject({ swarm_id: "main", execution_id: "run-1", agent: "swerun" });
      expect(record.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      expect("parent_swarm_id" in record).toBe(false);
    }
    expect(records[0]).toMatchObject({ type: "swarm_start", lead_agent: "swerun", prompt: "fix the bug" });
    expect(records[1]).toMatchObject({
      type: "agent_start",
      model: "openai/test-model",
      provider: "openai",
      directory: dir,
      tools: ["bash"],
    });
    expect(String(records[1]?.system_prompt)).toContain("bash");
    expect(records[2]).toEqual(
      expect.objectContaining({
        type: "user_prompt",
        message_count: 2,
        tools: ["bash"],
        delegates_to: [],
        source: "user",
      }),
    );
    expect(records[2]?.metadata).toMatchObject({
      prompt: expect.stringContaining("fix the bug"),
      message_count: 2,
      model: "openai/test-model",
      provider: "openai",
      tools: ["bash"],
      delegates_to: [],
      source: "user",
    });
    expect(records[3]).toMatchObject({
      type: "agent_step",
      content: "",
      tool_calls: [{ id: "call_a", name: "bash", arguments: { command: "echo hi" } }],
      finish_reason: "tool_calls",
      usage: {
        input_tokens: 500,
        output_tokens: 20,
        total_tokens: 520,
        input_cost: 500 * 1e-6,
        output_cost: 20 * 2e-6,
        cumulative_input_tokens: 500,
        cumulative_output_tokens: 20,
        cumulative_total_tokens: 520,
        context_limit: 1000,
        tokens_used_percentage: "52.0%",
        tokens_remaining: 480,
      },
    });
    expect((records[3]?.usage as { total_cost?: number } | undefined)?.total_cost).toBeCloseTo(540e-6, 12);
    expect(records[4]).toMatchObject({
      type: "tool_call",
      tool_call_id: "call_a",
      tool: "bash",
      arguments: { command: "echo hi" },
    });
    expect(records[5]).toMatchObject({
      type: "tool_result",
      tool_call_id: "call_a",
      tool: "bash",
      result: "hi\n",
      metadata: { returncode: 0, exception_info: "" },
    });
    expect(records[6]).toMatchObject({
      type: "llm_retry_attempt",
      model: "openai/test-model",
      attempt: 1,
      max_retries: 10,
      error_class: "InternalServerError",
    });
    expect(String(records[6]?.error_message)).toContain("overloaded");
    expect(typeof records[6]?.retry_delay).toBe("number");
    expect(records[7]).toMatchObject({
      type: "format_error",
      consecutive: 1,
      content: "I am done.",
      finish_reason: "stop",
      usage: { input_tokens: 650, cumulative_output_tokens: 30, tokens_used_percentage: "68.0%" },
    });
    // The warning measures what the usage reports: the cumulative total (650 + 20 + 10).
    expect(records[8]).toMatchObject({
      type: "context_limit_warning",
      threshold: "60%",
      current_usage: "68.0%",
      tokens_used: 680,
      tokens_remaining: 320,
      context_limit: 1000,
    });
    expect(records[10]).toMatchObject({ type: "context_limit_warning", threshold: "80%" });
    expect(records[12]).toMatchObject({
      type: "tool_result",
      tool_call_id: "call_b",
      metadata: { returncode: -1 },
    });
    expect(
      String((records[12]?.metadata as { exception_info?: string } | undefined)?.exception_info),
    ).toContain("timed out");
    expect(records[14]).toMatchObject({
      type: "context_limit_warning",
      threshold: "90%",
      current_usage: "96.5%",
    });
    expect(records[15]).toMatchObject({
      type: "context_limit_warning",
      threshold: "95%",
      tokens_remaining: 35,
    });
    expect(records[18]).toMatchObject({
      type: "agent_stop",
      content: "the-patch\n",
      finish_reason: "finish_swarm",
      exit_status: "Submitted",
      usage: {
        input_tokens: 900,
        output_tokens: 30,
        cumulative_output_tokens: 65,
        cumulative_total_tokens: 965,
        tokens_used_percentage: "96.5%",
        tokens_remaining: 35,
      },
    });
    // The run's total tokens (every call's input + output, as every output counts them), not the context's
    // cumulative total (965 here) the usage reports.
    expect(records[19]).toMatchObject({
      type: "swarm_stop",
      swarm_name: "main",
      success: true,
      content: "the-patch\n",
      total_tokens: 2965,
      agents_involved: ["swerun"],
    });
    expect(records[19]?.total_cost).toBeCloseTo(result.cost, 12);
  });

  it("warns when the model's price and context window are unknown, and leaves the context keys out", async () => {
    const dir = tempDir();
    server.push({
      body: completion({ toolCalls: [toolCall("call_s", { command: SUBMIT_COMMAND })], usage: usage(10, 2) }),
    });
    const runConfig = config(dir, {});
    runConfig.model.cost_tracking = "ignore_errors";
    const sink = new MemorySink();
    const stream = new SwarmEventStream({
      sink,
      swarmId: "main",
      executionId: "run-2",
      models: [await describeModel(runConfig.model)],
    });
    const result = await runTask("t", { config: runConfig, subscribers: [stream.listener] });
    stream.stop({ success: true });
    expect(result.exit_status).toBe("Submitted");
    const warning = byType(sink.records, "model_lookup_warning")[0];
    expect(warning).toMatchObject({ model: "openai/test-model", suggestions: [] });
    expect(String(warning?.error_message)).toContain(
      'no price or context window known for model "openai/test-model"',
    );
    const step = byType(sink.records, "agent_step")[0];
    expect(Object.keys(step?.usage as object).sort()).toEqual([
      "cumulative_input_tokens",
      "cumulative_output_tokens",
      "cumulative_total_tokens",
      "input_tokens",
      "output_tokens",
      "total_cost",
      "total_tokens",
    ]);
  });

  it("ends with llm_request_failed and an unsuccessful swarm_stop when the model refuses, and redacts secrets", async () => {
    const dir = tempDir();
    server.push({
      body: completion({
        toolCalls: [toolCall("call_k", { command: `echo key=$OPENAI_API_KEY ${TEST_KEY}` })],
        usage: usage(10, 2),
      }),
    });
    // The queue then runs dry: the server answers 400, which ends the run with an error.
    const { result, records } = await scriptedRun(dir);
    expect(result.error).toBeDefined();
    const types = records.map((r) => r.type);
    expect(types.slice(-3)).toEqual(["agent_stop", "llm_request_failed", "swarm_stop"]);
    expect(records.at(-1)).toMatchObject({ success: false });
    expect(records.at(-2)).toMatchObject({
      error_class: "ModelBadRequestError",
      status_code: 400,
      retryable: false,
    });
    const text = JSON.stringify(records);
    expect(text).not.toContain(TEST_KEY);
    expect(byType(records, "tool_result")[0]?.result).toBe("key=[REDACTED] [REDACTED]\n");
  });

  it("formats timestamps as UTC ISO 8601 with microseconds", () => {
    expect(isoTimestamp(Date.UTC(2026, 10, 23, 9, 31, 2, 123) + 0.456)).toBe("2026-11-23T09:31:02.123456Z");
  });
});
