import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { ResponsesServer } from "../helpers/responses-server.js";
import { tempDir } from "../helpers/tmp.js";

const KEY = "sk-swerun-cli-test-5d7e9a1c3b";

/** `swerun run` in a fresh folder with only `env` set (no credentials of this machine, no cloud metadata servers). */
async function run(args: string[], env: Record<string, string> = {}) {
  const dir = tempDir("swerun-provider-cli-");
  const clean: Record<string, string> = {
    HOME: dir,
    SWERUN_GLOBAL_CONFIG_DIR: dir,
    AWS_EC2_METADATA_DISABLED: "true",
    METADATA_SERVER_DETECTION: "none",
  };
  for (const name of Object.keys(process.env))
    if (/^(AWS_|AZURE_|GOOGLE_|VERTEX|PORTKEY_|REQUESTY_|OPENAI_|ANTHROPIC_)/.test(name)) clean[name] = "";
  const out = join(dir, "t.traj.json");
  const result = await runCli(
    ["run", "-t", "Submit hello.", "--yolo", "-c", `environment.cwd=${dir}`, "-o", out, ...args],
    {
      cwd: dir,
      env: { ...clean, ...env },
    },
  );
  return { result, out, dir };
}

describe("a missing credential is one line, exit 2, before any call", () => {
  const cases: Array<[string, string[], Record<string, string>, RegExp]> = [
    [
      "Azure without its endpoint",
      ["-m", "azure/my-deployment"],
      { AZURE_API_KEY: KEY },
      /set AZURE_API_BASE/,
    ],
    [
      "Azure without a key",
      ["-m", "azure/my-deployment"],
      { AZURE_API_BASE: "http://127.0.0.1:9" },
      /needs an API key: set AZURE_API_KEY/,
    ],
    [
      "Bedrock without a region",
      ["-m", "bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0"],
      {},
      /needs an AWS region: set AWS_REGION/,
    ],
    [
      "Bedrock without AWS credentials",
      ["-m", "bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0"],
      { AWS_REGION: "us-east-1" },
      /needs AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/,
    ],
    [
      "Vertex AI without application-default credentials",
      ["-m", "vertex_ai/claude-sonnet-4-5@20250929"],
      { VERTEXAI_PROJECT: "p" },
      /needs Google Cloud credentials: set GOOGLE_APPLICATION_CREDENTIALS/,
    ],
    [
      "Gemini on Vertex AI without application-default credentials",
      ["-m", "vertex_ai/gemini-2.5-pro"],
      { VERTEXAI_PROJECT: "p" },
      /needs Google Cloud credentials: set GOOGLE_APPLICATION_CREDENTIALS/,
    ],
    [
      "Azure without a key or an Entra ID token",
      ["-m", "azure/my-deployment"],
      { AZURE_API_BASE: "http://127.0.0.1:9" },
      /set AZURE_API_KEY \(or an Entra ID token in AZURE_AD_TOKEN\)/,
    ],
    [
      "Portkey without PORTKEY_API_KEY",
      ["-m", "gpt-4o", "--model-class", "portkey"],
      {},
      /set PORTKEY_API_KEY/,
    ],
    [
      "Requesty without REQUESTY_API_KEY",
      ["-m", "openai/gpt-4o", "--model-class", "requesty"],
      {},
      /set REQUESTY_API_KEY/,
    ],
    [
      "the Responses API without OPENAI_API_KEY",
      ["-m", "openai/gpt-5-codex", "--model-class", "litellm_response"],
      {},
      /set OPENAI_API_KEY/,
    ],
  ];
  for (const [name, args, env, message] of cases) {
    it(name, async () => {
      const { result } = await run(args, env);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).toMatch(message);
    });
  }

  it("a roulette whose sub-model has no key, or a bad sub-model config", async () => {
    const dir = tempDir("swerun-provider-cli-meta-");
    const sub = {
      model_name: "deterministic",
      model_class: "deterministic",
      outputs: [{ role: "assistant", content: "x" }],
    };
    const configs: Array<[unknown[], RegExp]> = [
      [[sub, { model_name: "anthropic/claude-sonnet-4-5" }], /needs an API key: set ANTHROPIC_API_KEY/],
      [[sub, { model_name: "x", temprature: 1 }], /model\.model_kwargs\.1\.temprature: unknown key/],
    ];
    for (const [index, [models, message]] of configs.entries()) {
      const file = join(dir, `roulette-${index}.yaml`);
      writeFileSync(
        file,
        JSON.stringify({ model: { model_class: "roulette", model_name: "roulette", model_kwargs: models } }),
      );
      const { result } = await run(["-c", "default", "-c", file]);
      expect(result.code).toBe(2);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).toMatch(message);
    }
  });
});

describe("swerun run -m openai/gpt-5-codex --model-class responses", () => {
  let server: ResponsesServer | undefined;
  afterEach(async () => {
    await server?.close();
  });

  it("runs on the Responses API, sending the reasoning items back, and records the responses", async () => {
    server = await ResponsesServer.start(KEY);
    const usage = {
      input_tokens: 1000,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 100,
      output_tokens_details: { reasoning_tokens: 60 },
      total_tokens: 1100,
    };
    const reply = (n: number, command: string) => ({
      id: `resp_${n}`,
      object: "response",
      created_at: 1,
      status: "completed",
      model: "gpt-5-codex",
      output: [
        { type: "reasoning", id: `rs_${n}`, summary: [], encrypted_content: `enc-${n}` },
        {
          type: "function_call",
          id: `fc_${n}`,
          call_id: `call_${n}`,
          name: "bash",
          arguments: JSON.stringify({ command }),
          status: "completed",
        },
      ],
      usage,
    });
    server.push(
      { body: reply(1, "echo hello > out.txt") },
      { body: reply(2, "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat out.txt") },
    );
    const { result, out } = await run(["-m", "openai/gpt-5-codex", "--model-class", "responses"], {
      OPENAI_API_KEY: KEY,
      OPENAI_BASE_URL: server.url,
    });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const trajectory = JSON.parse(readFileSync(out, "utf8"));
    expect(trajectory.info).toMatchObject({ exit_status: "Submitted", submission: "hello\n" });
    expect(trajectory.info.config.model_type).toBe(
      "minisweagent.models.litellm_response_model.LitellmResponseModel",
    );
    // gpt-5-codex at $1.25 and $10 per million tokens, reasoning tokens priced as output.
    expect(trajectory.info.model_stats.instance_cost).toBeCloseTo((2 * (1000 * 1.25 + 100 * 10)) / 1e6, 12);
    expect(trajectory.messages[2]).toMatchObject({ object: "response", id: "resp_1", role: "assistant" });
    expect(trajectory.messages[3]).toMatchObject({ type: "function_call_output", call_id: "call_1" });
    const second = server.requests[1]?.body.input;
    expect(second.map((item: { type?: string; role?: string }) => item.type ?? item.role)).toEqual([
      "system",
      "user",
      "reasoning",
      "function_call",
      "function_call_output",
    ]);
    expect(second[2].encrypted_content).toBe("enc-1");
    expect(readFileSync(out, "utf8")).not.toContain(KEY);
  });
});

describe("a Responses API trajectory", () => {
  it("is read back by swerun's own readers (replay)", async () => {
    const dir = tempDir("swerun-responses-replay-");
    const trajectory = JSON.parse(
      readFileSync(
        join(import.meta.dirname, "..", "fixtures", "providers", "expected", "responses-codex.traj.json"),
        "utf8",
      ),
    );
    const path = join(dir, "r.traj.json");
    writeFileSync(path, JSON.stringify(trajectory));
    const result = await runCli(
      ["replay", path, "--environment-class", "local", "--cwd", dir, "-o", join(dir, "out.traj.json")],
      { cwd: dir },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("exit status: Submitted (recorded: Submitted)");
  });
});
