import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCli } from "../helpers/cli.js";
import { externalAccount } from "../helpers/cloud-auth.js";
import { GeminiServer, generateContentProblem } from "../helpers/gemini-server.js";
import { isolatedSettings } from "../helpers/openai-server.js";
import {
  compareMessages,
  expectedRequests,
  expectedTrajectory,
  type Json,
  moreCase,
  runProviderCase,
  withoutNulls,
} from "../helpers/provider-fixtures.js";
import { tempDir } from "../helpers/tmp.js";

const SUBJECT_TOKEN = "swerun-test-oidc-token";

/** Tool call ids (litellm's and swerun's are random) numbered in order of appearance, signatures kept. */
function numberedIds(value: Json): Json {
  const ids = new Map<string, string>();
  const text = JSON.stringify(value).replace(/call_(?:[0-9a-f]{28}|<\d+>)/g, (id) => {
    if (!ids.has(id)) ids.set(id, `call_#${ids.size + 1}`);
    return ids.get(id) as string;
  });
  return JSON.parse(text);
}

/**
 * A generateContent body in one spelling: protobuf's JSON takes snake_case (litellm's) and camelCase (Google's
 * SDK's) field names alike, and schema types in either case (the SDK writes OBJECT and STRING).
 */
function oneSpelling(value: Json): Json {
  if (Array.isArray(value)) return value.map(oneSpelling);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()),
      key === "type" && typeof item === "string" ? item.toLowerCase() : oneSpelling(item),
    ]),
  );
}

/** What swerun records differently from litellm, deliberately (README, "Providers"). */
function recordedDifferences(message: Json): Json {
  if (typeof message.extra?.cost === "number")
    message.extra.cost = Number(message.extra.cost.toPrecision(12));
  // litellm's response object (its Vertex metadata lists, creation time): swerun keeps the usage.
  if (message.extra?.response) message.extra.response = { usage: message.extra.response.usage };
  return withoutNulls(message);
}

/** Application-default credentials (an external account) whose token endpoint is the server's. */
function googleEnv(server: GeminiServer): Record<string, string> {
  const dir = tempDir("swerun-gemini-adc-");
  writeFileSync(join(dir, "oidc-token"), SUBJECT_TOKEN);
  const keyFile = join(dir, "adc.json");
  writeFileSync(keyFile, JSON.stringify(externalAccount(`${server.url}/token`, join(dir, "oidc-token"))));
  return {
    VERTEXAI_PROJECT: "swerun-fixture",
    VERTEXAI_LOCATION: "us-east5",
    GOOGLE_APPLICATION_CREDENTIALS: keyFile,
  };
}

describe("Gemini on Vertex AI, as litellm sends and records it (test/fixtures/providers)", () => {
  let server: GeminiServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    vi.unstubAllEnvs();
  });

  for (const name of ["vertex-gemini", "vertex-gemini-thinking"]) {
    it(`${name}: the same requests, the same trajectory and costs but for the listed differences`, async () => {
      const fixture = moreCase(name);
      server = await GeminiServer.start(SUBJECT_TOKEN);
      vi.stubEnv("SWERUN_GLOBAL_CONFIG_DIR", isolatedSettings().dir);
      for (const [variable, value] of Object.entries(googleEnv(server))) vi.stubEnv(variable, value);
      server.push(...fixture.replies.map((body) => ({ body })));
      const { trajectory } = await runProviderCase(fixture, server.url);
      const expected = expectedRequests(name);
      const sent = server.requests.filter((r) => r.path !== "/token");
      expect(numberedIds(sent.map((r) => oneSpelling(withoutNulls(r.body))))).toEqual(
        numberedIds(expected.map((r) => oneSpelling(withoutNulls(r.body)))),
      );
      expect(sent.map((r) => [decodeURIComponent(r.path), r.query])).toEqual(
        expected.map((r) => [r.path, r.query]),
      );
      const mini = expectedTrajectory(name);
      const pairs = compareMessages(mini, trajectory, recordedDifferences);
      expect(numberedIds(pairs.actual)).toEqual(numberedIds(pairs.expected));
      expect(trajectory.info.model_stats.instance_cost).toBeCloseTo(mini.info.model_stats.instance_cost, 12);
      expect(trajectory.info.model_stats.api_calls).toBe(mini.info.model_stats.api_calls);
      expect(trajectory.info.exit_status).toBe(mini.info.exit_status);
      expect(trajectory.info.config.model_type).toBe(mini.info.config.model_type);
      expect(server.pending).toBe(0);
    });
  }

  it("a 429 (RESOURCE_EXHAUSTED) is retried; a refused request stops the run with Vertex's message", async () => {
    const fixture = moreCase("vertex-gemini-thinking");
    server = await GeminiServer.start(SUBJECT_TOKEN);
    vi.stubEnv("SWERUN_GLOBAL_CONFIG_DIR", isolatedSettings().dir);
    for (const [variable, value] of Object.entries(googleEnv(server))) vi.stubEnv(variable, value);
    const exhausted = {
      code: 429,
      message: "Resource exhausted. Please try again later.",
      status: "RESOURCE_EXHAUSTED",
    };
    server.push({ status: 429, headers: { "retry-after": "0" }, body: { error: exhausted } });
    server.push(...fixture.replies.map((body) => ({ body })));
    const { trajectory } = await runProviderCase(fixture, server.url);
    expect(trajectory.info.exit_status).toBe("Submitted");
    expect(server.requests.filter((r) => r.path !== "/token")).toHaveLength(3);
    const refused = { code: 400, message: "Invalid value at 'contents[0]'", status: "INVALID_ARGUMENT" };
    server.push({ status: 400, body: { error: refused } });
    await expect(runProviderCase(fixture, server.url)).rejects.toThrow(
      /^bad request \(HTTP 400\) at .*: Invalid value at 'contents\[0\]'/,
    );
  });

  it("a server that cannot be reached is retried, then the run stops saying so", async () => {
    server = await GeminiServer.start(SUBJECT_TOKEN);
    vi.stubEnv("SWERUN_GLOBAL_CONFIG_DIR", isolatedSettings().dir);
    for (const [variable, value] of Object.entries(googleEnv(server))) vi.stubEnv(variable, value);
    const fixture = moreCase("vertex-gemini-thinking");
    await expect(runProviderCase(fixture, "http://127.0.0.1:9", { retry_attempts: 2 })).rejects.toThrow(
      /failed 2 times; last error: cannot reach http:\/\/127\.0\.0\.1:9\/v1: fetch failed/,
    );
  });

  it("swerun run -m vertex_ai/gemini-...: the built CLI loads Google's SDK and runs to the submission", async () => {
    server = await GeminiServer.start(SUBJECT_TOKEN);
    const dir = tempDir("swerun-gemini-cli-");
    const submit = [
      { functionCall: { name: "bash", args: { command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" } } },
    ];
    const body = {
      candidates: [{ content: { role: "model", parts: submit }, finishReason: "STOP", index: 0 }],
      usageMetadata: {
        promptTokenCount: 900,
        candidatesTokenCount: 30,
        thoughtsTokenCount: 70,
        totalTokenCount: 1000,
      },
      modelVersion: "gemini-2.5-pro",
      responseId: "cli-1",
    };
    server.push({ body });
    const out = join(dir, "t.traj.json");
    const clean = Object.fromEntries(
      Object.keys(process.env)
        .filter((name) => /^(GOOGLE_|VERTEX|OPENAI_|ANTHROPIC_)/.test(name))
        .map((name) => [name, ""]),
    );
    const result = await runCli(
      [
        "run",
        "-m",
        "vertex_ai/gemini-2.5-pro",
        "-t",
        "Submit.",
        "--yolo",
        "-c",
        `environment.cwd=${dir}`,
        "-o",
        out,
      ],
      {
        cwd: dir,
        env: {
          ...clean,
          HOME: dir,
          SWERUN_GLOBAL_CONFIG_DIR: dir,
          METADATA_SERVER_DETECTION: "none",
          ...googleEnv(server),
          VERTEXAI_API_BASE: server.url,
        },
      },
    );
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const trajectory = JSON.parse(readFileSync(out, "utf8"));
    expect(trajectory.info.exit_status).toBe("Submitted");
    // 900 input and 100 output tokens (thoughts included) at gemini-2.5-pro's $1.25 and $10 per million.
    expect(trajectory.info.model_stats.instance_cost).toBeCloseTo(900 * 1.25e-6 + 100 * 1e-5, 12);
  });

  it("the server refuses what Vertex refuses", () => {
    const user = { role: "user", parts: [{ text: "hi" }] };
    const call = { role: "model", parts: [{ function_call: { name: "bash", args: {} } }] };
    const answer = { role: "user", parts: [{ function_response: { name: "bash", response: {} } }] };
    expect(generateContentProblem({ contents: [user, call, answer] })).toBeUndefined();
    expect(generateContentProblem({ contents: [user], temperature: 0 })).toMatch(
      /Unknown name "temperature"/,
    );
    expect(generateContentProblem({ contents: [{ role: "assistant", parts: [{ text: "x" }] }] })).toMatch(
      /valid role/,
    );
    expect(generateContentProblem({ contents: [user, call, user] })).toMatch(
      /number of function response parts/,
    );
    expect(generateContentProblem({ contents: [call, answer] })).toMatch(
      /function call turn comes immediately/,
    );
    expect(generateContentProblem({ contents: [user], generationConfig: { max_tokens: 5 } })).toMatch(
      /max_tokens/,
    );
    expect(
      generateContentProblem({ contents: [{ role: "user", parts: [{ text: "a", function_call: {} }] }] }),
    ).toMatch(/exactly one/);
  });
});
