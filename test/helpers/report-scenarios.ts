import { join } from "node:path";
import { runCli, startCli, waitFor } from "./cli.js";
import { type RunWorkspace, runArgs, runWorkspace } from "./openai-run.js";
import { completion, OpenAIServer, toolCall } from "./openai-server.js";

/** What a recorded scenario left behind. */
export interface Scenario {
  trajectory: string;
  report: string;
  stdout: string;
  stderr: string;
  code: number | null;
}

/** `swerun run` of `task` in the workspace at `server`, with the scenarios' model settings and a 2 s command timeout. */
function scenarioArgs(space: RunWorkspace, server: OpenAIServer, task: string): string[] {
  const config = [
    "model.model_kwargs.temperature=0.2",
    "model.model_kwargs.max_tokens=256",
    "environment.timeout=2",
  ];
  return runArgs(space, server, { task, config });
}

/**
 * A real `swerun run` (tool calls, local environment) against the local OpenAI-speaking server: a retried
 * request (HTTP 503), tool calls with reasoning, a reply cut at the token limit (format error), a command
 * that times out, a command that prints the API key (redacted), and a submission.
 */
export async function recordFullScenario(dir: string): Promise<Scenario> {
  const space = runWorkspace(dir);
  const server = await OpenAIServer.start();
  const usage = (prompt: number) => ({
    prompt_tokens: prompt,
    completion_tokens: 20,
    total_tokens: prompt + 20,
  });
  server.push(
    {
      status: 503,
      headers: { "retry-after": "0" },
      body: { error: { message: "the server is overloaded" } },
    },
    {
      body: completion({
        content: "Let me look at the file first.",
        toolCalls: [toolCall("call_1", { command: "cd . && grep -n hello greeting.txt" })],
        message: {
          reasoning_content: "The task is about greeting.txt, so I read it before changing anything.",
        },
        usage: usage(812),
      }),
    },
    {
      body: completion({
        content: "The greeting should be changed, and to do that I will first explain at great length why",
        finishReason: "length",
        usage: usage(905),
      }),
    },
    {
      body: completion({
        content: "Checking whether a slow command finishes.",
        toolCalls: [toolCall("call_3", { command: "sleep 5" })],
        usage: usage(1010),
      }),
    },
    {
      body: completion({
        content: "Fixing the greeting and checking the environment.",
        toolCalls: [
          toolCall("call_4", {
            command: "printf 'hello, world\\n' > greeting.txt && sed -n '1p' greeting.txt",
          }),
          toolCall("call_5", { command: 'echo "key=$OPENAI_API_KEY"' }),
        ],
        usage: usage(1120),
      }),
    },
    {
      body: completion({
        content: "The greeting is fixed. Submitting.",
        toolCalls: [
          toolCall("call_6", { command: "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat greeting.txt" }),
        ],
        usage: usage(1230),
      }),
    },
  );
  try {
    const result = await runCli(scenarioArgs(space, server, "greeting.txt should say hello, world"), {
      cwd: dir,
      env: space.env,
    });
    return { trajectory: join(dir, "run.traj.json"), report: join(dir, "run.report.json"), ...result };
  } finally {
    await server.close();
  }
}

/** A real `swerun run` stopped by SIGTERM while it waits for the model's second reply: UserInterruption. */
export async function recordInterruptedScenario(dir: string): Promise<Scenario> {
  const space = runWorkspace(dir);
  const server = await OpenAIServer.start();
  server.push(
    {
      body: completion({
        content: "First I list the files.",
        toolCalls: [toolCall("call_1", { command: "ls" })],
        usage: { prompt_tokens: 700, completion_tokens: 12, total_tokens: 712 },
      }),
    },
    { stall: true },
  );
  try {
    const run = startCli(scenarioArgs(space, server, "tidy up the greeting"), { cwd: dir, env: space.env });
    await waitFor(() => server.requests.length >= 2, 20_000, run.child);
    run.child.kill("SIGTERM");
    const result = await run.done;
    return { trajectory: join(dir, "run.traj.json"), report: join(dir, "run.report.json"), ...result };
  } finally {
    await server.close();
  }
}
