import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { completion, TEST_KEY, TEST_PRICES, toolCall, useOpenAIServer } from "../helpers/openai-server.js";
import { tempDir } from "../helpers/tmp.js";

const server = useOpenAIServer();

const usage = { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 };
/** What one call costs at TEST_PRICES. */
const CALL_COST = 1000 * 1e-6 + 100 * 2e-6;
const SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat out.txt";

function allFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? allFiles(path) : [path];
  });
}

/** Runs `swerun run` against the fake server from a fresh directory; returns the result, the trajectory and the dir. */
async function swerunRun(modelClass: string) {
  const dir = tempDir("swerun-openai-cli-");
  const registry = join(dir, "prices.json");
  writeFileSync(registry, JSON.stringify(TEST_PRICES));
  const out = join(dir, "x.traj.json");
  const result = await runCli(
    [
      "run",
      "-m",
      "openai/test-model",
      "--model-class",
      modelClass,
      "-c",
      `model.model_kwargs.api_base=${server.url}`,
      "-c",
      `environment.cwd=${dir}`,
      "-t",
      "Write hello to out.txt, then submit it.",
      "--yolo",
      "-o",
      out,
    ],
    {
      cwd: dir,
      env: { OPENAI_API_KEY: TEST_KEY, SWERUN_GLOBAL_CONFIG_DIR: dir, LITELLM_MODEL_REGISTRY_PATH: registry },
    },
  );
  const trajectory = JSON.parse(readFileSync(out, "utf8"));
  return { result, trajectory, dir };
}

function expectNoKeyAnywhere(dir: string, result: { stdout: string; stderr: string }): void {
  const files = allFiles(dir);
  expect(files.some((file) => file.endsWith("x.traj.json"))).toBe(true);
  for (const file of files) expect(readFileSync(file, "utf8"), file).not.toContain(TEST_KEY);
  expect(result.stdout).not.toContain(TEST_KEY);
  expect(result.stderr).not.toContain(TEST_KEY);
}

describe("swerun run -m openai/<name> against an OpenAI-compatible server", () => {
  it("completes a task with tool calls, recovering from malformed arguments", async () => {
    server.push(
      { body: completion({ toolCalls: [toolCall("call_0", "{broken")], usage }) },
      { body: completion({ toolCalls: [toolCall("call_1", { command: "echo hello > out.txt" })], usage }) },
      { body: completion({ toolCalls: [toolCall("call_2", { command: SUBMIT })], usage }) },
    );
    const { result, trajectory, dir } = await swerunRun("openai");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(trajectory.info).toMatchObject({ exit_status: "Submitted", submission: "hello\n" });
    expect(trajectory.info.model_stats.api_calls).toBe(3);
    expect(trajectory.info.model_stats.instance_cost).toBeCloseTo(3 * CALL_COST, 12);
    expect(trajectory.info.config.model_type).toBe("minisweagent.models.litellm_model.LitellmModel");
    expect(trajectory.info.config.model.model_name).toBe("openai/test-model");

    // As mini-swe-agent: the malformed reply is kept in the feedback message (with its cost and response),
    // and the submitting tool call is answered as not executed.
    const assistants = trajectory.messages.filter((m: { role: string }) => m.role === "assistant");
    expect(assistants).toHaveLength(2);
    const feedback = trajectory.messages[2];
    expect(feedback.role).toBe("user");
    expect(feedback.content).toContain("Error parsing tool call arguments");
    for (const message of [feedback, ...assistants]) {
      expect(message.extra.cost).toBeCloseTo(CALL_COST, 12);
      expect(message.extra.usage).toEqual(usage);
      expect(message.extra.response.id).toBe("chatcmpl-test");
    }
    const tools = trajectory.messages.filter((m: { role: string }) => m.role === "tool");
    expect(tools.map((m: { tool_call_id: string }) => m.tool_call_id)).toEqual(["call_1", "call_2"]);
    expect(tools[1].extra.exception_info).toBe("action was not executed");

    expect(server.requests).toHaveLength(3);
    for (const request of server.requests) {
      expect(request.headers.authorization).toBe(`Bearer ${TEST_KEY}`);
      expect(request.body.model).toBe("test-model");
      expect(request.body.tools).toHaveLength(1);
      expect(JSON.stringify(request.body.messages)).not.toContain('"extra"');
    }
    const last = server.requests[2]?.body.messages;
    expect(last.map((m: { role: string }) => m.role)).toEqual([
      "system",
      "user",
      "user",
      "assistant",
      "tool",
    ]);
    expect(last[4]).toMatchObject({ role: "tool", tool_call_id: "call_1" });
    expectNoKeyAnywhere(dir, result);
  });

  it("completes a task with text-based actions", async () => {
    const block = (command: string) => `Next step.\n\n\`\`\`mswea_bash_command\n${command}\n\`\`\``;
    server.push(
      { body: completion({ content: block("echo hello > out.txt"), usage }) },
      { body: completion({ content: block(SUBMIT), usage }) },
    );
    const { result, trajectory, dir } = await swerunRun("openai_textbased");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(trajectory.info).toMatchObject({ exit_status: "Submitted", submission: "hello\n" });
    expect(trajectory.info.model_stats.instance_cost).toBeCloseTo(2 * CALL_COST, 12);
    expect(server.requests.map((request) => request.body.tools)).toEqual([undefined, undefined]);
    expect(server.requests[1]?.body.messages.map((m: { role: string }) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
    ]);
    expectNoKeyAnywhere(dir, result);
  });

  it("stops with exit code 2 and one line naming the variable when the key is refused", async () => {
    server.push({ status: 401, body: { error: { message: `Incorrect API key provided: ${TEST_KEY}` } } });
    const { result, trajectory, dir } = await swerunRun("openai");
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/authentication failed \(HTTP 401\).*Set OPENAI_API_KEY/);
    expect(server.requests).toHaveLength(1);
    expect(trajectory.info.exit_status).not.toBe("Submitted");
    expectNoKeyAnywhere(dir, result);
  });
});
