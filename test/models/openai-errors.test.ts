import { describe, expect, it } from "vitest";
import { modelSchema } from "../../src/config/model.js";
import { UserError } from "../../src/errors.js";
import type { AgentEvent } from "../../src/events.js";
import type { Message } from "../../src/messages.js";
import { MissingApiKeyError, OpenAIModel } from "../../src/models/openai.js";
import { UnknownProviderError } from "../../src/models/providers.js";
import { MAX_REPLY_BYTES, ModelReplyTooLargeError } from "../../src/models/reply-cap.js";
import {
  ContextWindowExceededError,
  ModelAuthenticationError,
  ModelBadRequestError,
  ModelNotFoundError,
  ModelPermissionError,
  ModelRequestError,
  ModelRetriesExhaustedError,
} from "../../src/models/retry.js";
import {
  completion,
  isolatedSettings,
  TEST_KEY,
  TEST_TEMPLATES,
  testModel,
  toolCall,
  useOpenAIServer,
} from "../helpers/openai-server.js";

const server = useOpenAIServer();

const conversation: Message[] = [{ role: "user", content: "Do the task." }];
const ok = () => ({ body: completion({ toolCalls: [toolCall("call_1", { command: "ls" })] }) });
const apiError = (status: number, message: string, extra: Record<string, unknown> = {}) => ({
  status,
  body: { error: { message, type: "invalid_request_error", ...extra } },
});
const retries = (events: AgentEvent[]) =>
  events.filter(
    (event): event is Extract<AgentEvent, { type: "model_retry" }> => event.type === "model_retry",
  );

async function caught(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe("retries", () => {
  it("honours Retry-After on 429 and reports the retry", async () => {
    server.push({ ...apiError(429, "Rate limit reached"), headers: { "retry-after": "1" } }, ok());
    const { model, events } = await testModel(server);
    const started = performance.now();
    const message = await model.query(conversation);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(message.extra?.actions).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
    expect(retries(events)).toEqual([
      {
        type: "model_retry",
        attempt: 1,
        max_retries: 10,
        error_class: "RateLimitError",
        error: "HTTP 429: Rate limit reached",
        delay_s: 1,
        time: expect.any(Number),
      },
    ]);
  });

  it("retries a 500, and a response without choices, with short backoff", async () => {
    server.push(apiError(500, "boom"), { body: { id: "x", choices: [] } }, ok());
    const { model, events } = await testModel(server);
    await model.query(conversation);
    expect(server.requests).toHaveLength(3);
    const [first, second] = retries(events);
    expect(first).toMatchObject({ attempt: 1, error: "HTTP 500: boom" });
    expect(second).toMatchObject({ attempt: 2, error: "the response had no choices" });
    expect(first?.delay_s).toBeGreaterThanOrEqual(0.01);
    expect(first?.delay_s).toBeLessThanOrEqual(0.02);
  });

  it("gives up after retry_attempts with the last error", async () => {
    server.push(apiError(503, "overloaded"), apiError(503, "overloaded"), apiError(503, "still overloaded"));
    const { model, events } = await testModel(server, { retry_attempts: 3 });
    const error = await caught(model.query(conversation));
    expect(error).toBeInstanceOf(ModelRetriesExhaustedError);
    expect(error).toBeInstanceOf(UserError);
    expect(error.message).toBe(
      `the model request to ${server.url} (model "test-model") failed 3 times; last error: HTTP 503: still overloaded`,
    );
    expect(server.requests).toHaveLength(3);
    expect(retries(events)).toHaveLength(2);
  });

  it("retries a 200 whose JSON body is cut off, like a 5xx", async () => {
    server.push({ truncateBody: true, body: completion({ content: "x".repeat(200) }) }, ok());
    const { model, events } = await testModel(server);
    const message = await model.query(conversation);
    expect(message.extra?.actions).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
    expect(retries(events)[0]?.error).toMatch(/^the response was not valid JSON \(.+\)$/);
  });

  it("retries a body whose connection is cut mid-stream (TypeError: terminated), like a 5xx", async () => {
    server.push({ cutBody: true, body: completion({ content: "x".repeat(5000) }) }, ok());
    const { model, events } = await testModel(server);
    const message = await model.query(conversation);
    expect(message.extra?.actions).toHaveLength(1);
    expect(server.requests).toHaveLength(2);
    expect(retries(events)[0]?.error).toMatch(/^the connection was cut before the response ended \(.+\)$/);
  });

  it("stops reading a reply past 16 MiB, announced or streamed, and ends the run with a clear error: no retry", async () => {
    const big = completion({ content: "x".repeat(MAX_REPLY_BYTES) });
    const length = Buffer.byteLength(JSON.stringify(big));
    server.push({ body: big }, { body: big, headers: { "content-length": String(length) } }, ok());
    const { model } = await testModel(server);
    const streamed = await caught(model.query(conversation));
    expect(streamed).toBeInstanceOf(ModelReplyTooLargeError);
    expect(streamed).toBeInstanceOf(UserError);
    expect(streamed.message).toBe(
      `the reply from ${server.url}/chat/completions passed the 16.8 MB a model reply may have (the longest replies models give are under 1 MiB): not read further`,
    );
    expect(server.requests).toHaveLength(1);
    const announced = await caught(model.query(conversation));
    expect(announced.message).toContain(
      `has ${(length / 1e6).toFixed(1)} MB (Content-Length), more than the 16.8 MB`,
    );
    expect(server.requests).toHaveLength(2);
    // Just under the cap is read as usual.
    server.push({
      body: completion({
        content: "y".repeat(MAX_REPLY_BYTES - 1000),
        toolCalls: [toolCall("c", { command: "ls" })],
      }),
    });
    expect((await model.query(conversation)).extra?.actions).toHaveLength(1);
  });

  it("names the endpoint, never the key, when cut-off bodies use up the attempts", async () => {
    const truncated = { truncateBody: true, body: completion({ content: TEST_KEY }) };
    server.push(truncated, truncated);
    const { model } = await testModel(server, { retry_attempts: 2 });
    const error = await caught(model.query(conversation));
    expect(error).toBeInstanceOf(ModelRetriesExhaustedError);
    expect(error.message).toContain(`the model request to ${server.url} (model "test-model") failed 2 times`);
    expect(error.message).toContain("last error: the response was not valid JSON");
    expect(error.message).not.toContain(TEST_KEY);
  });

  it("abandons a request that stalls before the headers, and retries it", async () => {
    server.push({ stall: true }, ok());
    const { model, events } = await testModel(server, { request_timeout: 0.3 });
    const message = await model.query(conversation);
    expect(message.extra?.actions).toHaveLength(1);
    expect(retries(events)[0]).toMatchObject({ attempt: 1, error: "no response within 0.3 s" });
  });

  it("abandons a response whose body stalls", async () => {
    server.push(
      { stallBody: true, body: completion({ content: "x".repeat(1000) }) },
      { stallBody: true, body: {} },
    );
    const { model, events } = await testModel(server, { request_timeout: 0.3, retry_attempts: 2 });
    const error = await caught(model.query(conversation));
    expect(error).toBeInstanceOf(ModelRetriesExhaustedError);
    expect(error.message).toContain("no response within 0.3 s");
    expect(retries(events)).toHaveLength(1);
  });

  it("retries when the server cannot be reached", async () => {
    const { model, events } = await testModel(server, {
      retry_attempts: 2,
      model_kwargs: { api_base: "http://127.0.0.1:1/v1" },
    });
    const error = await caught(model.query(conversation));
    expect(error).toBeInstanceOf(ModelRetriesExhaustedError);
    expect(error.message).toMatch(/last error: cannot reach http:\/\/127\.0\.0\.1:1\/v1: Connection error/);
    expect(retries(events)).toHaveLength(1);
  });

  it("stops at once when the run is interrupted", async () => {
    server.push({ stall: true });
    const { model, events } = await testModel(server);
    const controller = new AbortController();
    const reason = new Error("interrupted by the user");
    setTimeout(() => controller.abort(reason), 100);
    expect(await caught(model.query(conversation, { signal: controller.signal }))).toBe(reason);
    expect(retries(events)).toEqual([]);
  });
});

describe("errors that stop the run at once", () => {
  const cases: Array<[string, ReturnType<typeof apiError>, new (...args: never[]) => Error, RegExp]> = [
    [
      "401",
      apiError(401, `Incorrect API key provided: ${TEST_KEY}.`),
      ModelAuthenticationError,
      /^authentication failed \(HTTP 401\) at http:\/\/127\.0\.0\.1:\d+\/v1 \(model "test-model"\): Incorrect API key provided: \[REDACTED\]\.\. Set OPENAI_API_KEY in the environment, in \.env, or with `swerun config set OPENAI_API_KEY <key>` \(the key in use came from environment\)$/,
    ],
    [
      "403",
      apiError(403, "not allowed"),
      ModelPermissionError,
      /permission denied \(HTTP 403\).*not allowed/,
    ],
    [
      "404",
      apiError(404, "The model does not exist"),
      ModelNotFoundError,
      /not found \(HTTP 404\).*Check the model name/,
    ],
    [
      "400",
      apiError(400, "Unrecognized request argument: foo"),
      ModelBadRequestError,
      /bad request \(HTTP 400\).*foo/,
    ],
    [
      "429 with exhausted quota",
      apiError(429, "You exceeded your current quota", { code: "insufficient_quota" }),
      ModelRequestError,
      /^quota exhausted \(HTTP 429\)/,
    ],
    [
      "context window",
      apiError(400, "This model's maximum context length is 8192 tokens.", {
        code: "context_length_exceeded",
      }),
      ContextWindowExceededError,
      /no longer fits the context window of "test-model" \(HTTP 400\)/,
    ],
  ];
  for (const [name, response, type, message] of cases) {
    it(`${name}: one request, one line, never the key`, async () => {
      server.push(response, ok());
      const { model, events } = await testModel(server);
      const error = await caught(model.query(conversation));
      expect(error).toBeInstanceOf(type);
      expect(error).toBeInstanceOf(UserError);
      expect(error.message).toMatch(message);
      expect(error.message).not.toContain(TEST_KEY);
      expect(error.message).not.toContain("\n");
      expect(server.requests).toHaveLength(1);
      expect(retries(events)).toEqual([]);
    });
  }
});

describe("endpoint and key", () => {
  const config = (model_name: string, model_kwargs: Record<string, unknown> = {}) =>
    modelSchema.parse({ model_name, model_kwargs, ...TEST_TEMPLATES, cost_tracking: "ignore_errors" });

  it("refuses to start without a key for a hosted provider, naming the variable", async () => {
    const { settings } = isolatedSettings();
    const attempt = OpenAIModel.create(config("anthropic/claude-sonnet-4-5"), { textBased: false, settings });
    await expect(attempt).rejects.toThrow(MissingApiKeyError);
    await expect(attempt).rejects.toThrow(
      'model "anthropic/claude-sonnet-4-5" needs an API key: set ANTHROPIC_API_KEY in the environment, in .env in the current directory, or with `swerun config set ANTHROPIC_API_KEY <key>`',
    );
  });

  it("takes the model name from SWERUN_MODEL_NAME when the config has none, else asks for one", async () => {
    const named = isolatedSettings({
      SWERUN_MODEL_NAME: "groq/llama-3.3-70b-versatile",
      GROQ_API_KEY: TEST_KEY,
    });
    const model = await OpenAIModel.create(config(""), { textBased: false, settings: named.settings });
    expect(model.name).toBe("groq/llama-3.3-70b-versatile");
    expect(model.serialize().model.model_name).toBe("groq/llama-3.3-70b-versatile");
    const { settings } = isolatedSettings();
    await expect(OpenAIModel.create(config(""), { textBased: false, settings })).rejects.toThrow(
      "no model name: pass -m provider/model",
    );
  });

  it("rejects an unknown provider before any request", async () => {
    const { settings } = isolatedSettings({ OPENAI_API_KEY: TEST_KEY });
    await expect(OpenAIModel.create(config("acme/model-1"), { textBased: false, settings })).rejects.toThrow(
      UnknownProviderError,
    );
  });

  it("sends no Authorization header to a custom base URL when there is no key", async () => {
    server.push(ok());
    const { settings } = isolatedSettings();
    const model = await OpenAIModel.create(config("openai/test-model", { api_base: server.url }), {
      textBased: false,
      settings,
    });
    await model.query(conversation);
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
  });

  it("takes model_kwargs.api_key over the environment, and never records it", async () => {
    server.push(ok());
    const { settings } = isolatedSettings({ OPENAI_API_KEY: "sk-from-environment-1234" });
    const extra_headers = { "X-Api-Key": "header-secret-9876", "HTTP-Referer": "https://example.test" };
    const model = await OpenAIModel.create(
      config("openai/test-model", { api_base: server.url, api_key: TEST_KEY, extra_headers }),
      { textBased: false, settings },
    );
    await model.query(conversation);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
    expect(server.requests[0]?.headers["x-api-key"]).toBe("header-secret-9876");
    const recorded = JSON.stringify([model.serialize(), model.templateVars()]);
    expect(recorded).not.toContain(TEST_KEY);
    expect(recorded).not.toContain("header-secret-9876");
    expect(recorded).toContain("https://example.test");
    expect(model.serialize().model_type).toBe("minisweagent.models.litellm_model.LitellmModel");
  });
});
