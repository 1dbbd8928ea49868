import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { modelSchema } from "../../src/config/model.js";
import type { AgentEvent } from "../../src/events.js";
import type { Message } from "../../src/messages.js";
import { AnthropicModel } from "../../src/models/anthropic.js";
import { maxOutputTokens } from "../../src/models/anthropic-request.js";
import { resetGlobalModelStats } from "../../src/models/global-stats.js";
import { ModelAuthenticationError, ModelRetriesExhaustedError } from "../../src/models/retry.js";
import { messagesRequestProblem } from "../helpers/anthropic-checks.js";
import { AnthropicServer } from "../helpers/anthropic-server.js";
import { runCli } from "../helpers/cli.js";
import { isolatedSettings } from "../helpers/openai-server.js";
import { tempDir } from "../helpers/tmp.js";

const KEY = "sk-ant-swerun-test-91c2e5";
const MODEL = "claude-sonnet-4-5-20250929";
const SYSTEM: Message = { role: "system", content: "You are a test." };
const TASK: Message = { role: "user", content: "Do it." };

function reply(content: unknown[], usage: Record<string, number> = {}) {
  return {
    id: "msg_test",
    type: "message",
    role: "assistant",
    model: MODEL,
    content,
    stop_reason: content.some((b) => (b as { type: string }).type === "tool_use") ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 100, output_tokens: 10, ...usage },
  };
}
const toolUse = (id: string, command: string) => ({ type: "tool_use", id, name: "bash", input: { command } });

let server: AnthropicServer;
beforeEach(async () => {
  server = await AnthropicServer.start({ apiKey: KEY });
});
afterEach(async () => {
  await server.close();
});

async function model(overrides: Record<string, unknown> = {}, env: Record<string, string> = {}) {
  resetGlobalModelStats();
  const { settings } = isolatedSettings({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_API_BASE: server.url, ...env });
  const { model_kwargs, ...rest } = overrides;
  const config = modelSchema.parse({
    model_name: `anthropic/${MODEL}`,
    retry_min_wait: 0.01,
    retry_max_wait: 0.02,
    request_timeout: 5,
    ...rest,
    model_kwargs: { ...(model_kwargs as Record<string, unknown> | undefined) },
  });
  const events: AgentEvent[] = [];
  const created = await AnthropicModel.create(config, {
    textBased: false,
    emit: (e) => events.push(e),
    settings,
  });
  return { model: created, events };
}

describe("AnthropicModel", () => {
  it("retries 529 (overloaded) and 429 as the server's retry-after says, and records the attempts", async () => {
    server.push(
      { status: 529, body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } },
      {
        status: 429,
        headers: { "retry-after": "0.01" },
        body: {
          type: "error",
          error: { type: "rate_limit_error", message: "Number of requests has exceeded your rate limit" },
        },
      },
      { body: reply([toolUse("toolu_1", "ls")]) },
    );
    const { model: m, events } = await model();
    const message = await m.query([SYSTEM, TASK]);
    expect(message.extra?.actions).toEqual([{ command: "ls", tool_call_id: "toolu_1" }]);
    const retries = message.extra?.retries as Array<{ error: string; delay_s: number }>;
    expect(retries.map((r) => r.error)).toEqual([
      "HTTP 529: Overloaded",
      "HTTP 429: Number of requests has exceeded your rate limit",
    ]);
    expect(retries[1]?.delay_s).toBe(0.01);
    expect(events.filter((e) => e.type === "model_retry")).toHaveLength(2);
  });

  it("stops at once on a bad key, naming the variable to set", async () => {
    const { model: m } = await model({}, { ANTHROPIC_API_KEY: "sk-ant-wrong-key-0000" });
    const error = await m.query([SYSTEM, TASK]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelAuthenticationError);
    expect((error as Error).message).toMatch(
      /authentication failed \(HTTP 401\).*invalid x-api-key.*Set ANTHROPIC_API_KEY/,
    );
    expect((error as Error).message).not.toContain("sk-ant-wrong-key-0000");
  });

  it("gives up after the configured attempts with the endpoint named", async () => {
    for (let i = 0; i < 2; i++)
      server.push({
        status: 529,
        body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      });
    const { model: m } = await model({ retry_attempts: 2 });
    const error = await m.query([SYSTEM, TASK]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelRetriesExhaustedError);
    expect((error as Error).message).toContain(`${server.url} (model "${MODEL}") failed 2 times`);
  });

  it("takes its base URL from model_kwargs.api_base, ANTHROPIC_API_BASE or ANTHROPIC_BASE_URL (a trailing /v1/messages too)", async () => {
    server.push(
      { body: reply([toolUse("a", "true")]) },
      { body: reply([toolUse("b", "true")]) },
      { body: reply([toolUse("c", "true")]) },
    );
    const elsewhere = "http://127.0.0.1:9";
    const byKwarg = await model(
      { model_kwargs: { api_base: `${server.url}/v1/messages` } },
      { ANTHROPIC_API_BASE: elsewhere },
    );
    const byBaseUrl = await model({}, { ANTHROPIC_API_BASE: "", ANTHROPIC_BASE_URL: server.url });
    const byApiBase = await model({}, { ANTHROPIC_BASE_URL: elsewhere });
    for (const { model: m } of [byKwarg, byBaseUrl, byApiBase]) await m.query([SYSTEM, TASK]);
    expect(server.requests.map((r) => r.path)).toEqual(["/v1/messages", "/v1/messages", "/v1/messages"]);
  });

  it("prices cache writes and reads at their own rates (Sonnet 4.5: $3, $3.75, $0.30, $15 per million)", async () => {
    server.push({
      body: reply([toolUse("t", "true")], {
        input_tokens: 1000,
        cache_creation_input_tokens: 20000,
        cache_read_input_tokens: 100000,
        output_tokens: 500,
      }),
    });
    const { model: m } = await model();
    const message = await m.query([SYSTEM, TASK]);
    expect(message.extra?.cost).toBeCloseTo((1000 * 3 + 20000 * 3.75 + 100000 * 0.3 + 500 * 15) / 1e6, 12);
  });

  it("defaults max_tokens to the model's most output tokens", () => {
    expect(maxOutputTokens("claude-sonnet-4-5-20250929")).toBe(64000);
    expect(maxOutputTokens("us.anthropic.claude-sonnet-4-5-20250929-v1:0")).toBe(64000);
    expect(maxOutputTokens("claude-sonnet-4-5@20250929")).toBe(64000);
    expect(maxOutputTokens("claude-opus-4-1-20250805")).toBe(32000);
    expect(maxOutputTokens("claude-3-5-haiku-20241022")).toBe(8192);
    expect(maxOutputTokens("claude-3-haiku-20240307")).toBe(4096);
    expect(maxOutputTokens("claude-opus-4-7")).toBe(128000);
  });
});

describe("the local Messages API refuses what Anthropic refuses", () => {
  const user = (content: unknown) => ({ role: "user", content });
  const assistant = (content: unknown) => ({ role: "assistant", content });
  const base = { model: MODEL, max_tokens: 100, tools: [{ name: "bash", input_schema: { type: "object" } }] };
  const use = { type: "tool_use", id: "t1", name: "bash", input: { command: "ls" } };
  const result = { type: "tool_result", tool_use_id: "t1", content: "ok" };
  const text = (t: string, marked = false) => ({
    type: "text",
    text: t,
    ...(marked ? { cache_control: { type: "ephemeral" } } : {}),
  });
  const problem = (body: Record<string, unknown>) =>
    messagesRequestProblem({ ...base, ...body }, { modelInBody: true });

  it("accepts a valid conversation", () => {
    expect(problem({ messages: [user("a"), assistant([use]), user([result, text("b")])] })).toBeUndefined();
  });
  it("consecutive turns of one role", () => {
    expect(problem({ messages: [user("a"), user("b")] })).toMatch(/roles must alternate/);
  });
  it("a tool_result without its tool_use, and a tool_use without its result", () => {
    expect(problem({ messages: [user("a"), assistant("b"), user([result])] })).toMatch(
      /unexpected `tool_use_id`/,
    );
    expect(problem({ messages: [user("a"), assistant([use]), user([text("b")])] })).toMatch(
      /without `tool_result`/,
    );
    expect(problem({ messages: [user("a"), assistant([use]), user([text("b"), result])] })).toMatch(
      /must come first/,
    );
  });
  it("thinking blocks without signatures when thinking is on, or a tool turn that does not start with one", () => {
    const thinking = { thinking: { type: "enabled", budget_tokens: 1024 }, max_tokens: 5120 };
    const unsigned = { type: "thinking", thinking: "hm" };
    expect(
      problem({ ...thinking, messages: [user("a"), assistant([unsigned, use]), user([result])] }),
    ).toMatch(/signature/);
    expect(problem({ ...thinking, messages: [user("a"), assistant([use]), user([result])] })).toMatch(
      /must start with a thinking block/,
    );
  });
  it("more than 4 cache_control blocks", () => {
    const marked = user([text("a", true), text("b", true), text("c", true)]);
    expect(problem({ system: [text("s", true), text("t", true)], messages: [marked] })).toMatch(
      /maximum of 4 blocks/,
    );
  });
});

describe("swerun run -m anthropic/...", () => {
  it("without ANTHROPIC_API_KEY stops before any call: one line, exit 2", async () => {
    const dir = tempDir("swerun-anthropic-cli-");
    const result = await runCli(
      ["run", "-m", `anthropic/${MODEL}`, "-t", "x", "--yolo", "-o", join(dir, "t.json")],
      {
        cwd: dir,
        env: { SWERUN_GLOBAL_CONFIG_DIR: dir, ANTHROPIC_API_KEY: "", ANTHROPIC_API_BASE: "" },
      },
    );
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(/needs an API key: set ANTHROPIC_API_KEY/);
    expect(server.requests).toHaveLength(0);
  });

  it("runs a task end to end and never writes the key", async () => {
    const dir = tempDir("swerun-anthropic-cli-");
    writeFileSync(join(dir, "ok.txt"), "ok\n");
    server.push(
      { body: reply([{ type: "text", text: "Reading." }, toolUse("toolu_a", "cat ok.txt")]) },
      { body: reply([toolUse("toolu_b", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat ok.txt")]) },
    );
    const out = join(dir, "t.traj.json");
    const result = await runCli(
      [
        "run",
        "-m",
        `anthropic/${MODEL}`,
        "-t",
        "Submit ok.txt",
        "--yolo",
        "-c",
        `environment.cwd=${dir}`,
        "-o",
        out,
      ],
      {
        cwd: dir,
        env: { SWERUN_GLOBAL_CONFIG_DIR: dir, ANTHROPIC_API_KEY: KEY, ANTHROPIC_API_BASE: server.url },
      },
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const { readFileSync } = await import("node:fs");
    const text = readFileSync(out, "utf8");
    expect(text).not.toContain(KEY);
    const trajectory = JSON.parse(text);
    expect(trajectory.info.exit_status).toBe("Submitted");
    expect(trajectory.info.submission).toBe("ok\n");
    expect(server.requests[1]?.body.messages.at(-1).content[0]).toMatchObject({
      type: "tool_result",
      tool_use_id: "toolu_a",
    });
  });
});
