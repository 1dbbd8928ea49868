import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, startCli, waitFor } from "./cli.js";
import { type RunWorkspace, runArgs, runWorkspace } from "./openai-run.js";
import { completion, OpenAIServer, type ScriptedResponse, TEST_PRICES, toolCall } from "./openai-server.js";

/** The context window the conformance runs' price registry gives `openai/test-model`. */
export const CONTEXT_WINDOW = 4000;

/** One real `swerun run` (or batch) and everything it wrote. */
export interface SeedRun {
  name: string;
  dir: string;
  /** The process's exit code. */
  code: number | null;
  stderr: string;
  /** The trajectory (a single run), or the batch's output folder. */
  trajectory: string;
  /** `--report`'s file (single runs). */
  report?: string;
  /** `--events`'s JSON lines. */
  events: Record<string, unknown>[];
  /** HTTP requests the model server received (0 for scripted models). */
  requests: number;
}

const usage = (prompt: number, completionTokens = 20) => ({
  prompt_tokens: prompt,
  completion_tokens: completionTokens,
  total_tokens: prompt + completionTokens,
});

function readEvents(path: string): Record<string, unknown>[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A workspace under `dir` whose price registry gives `openai/test-model` a context window of CONTEXT_WINDOW. */
function prepare(dir: string): RunWorkspace {
  return runWorkspace(dir, {
    "openai/test-model": { ...TEST_PRICES["openai/test-model"], max_input_tokens: CONTEXT_WINDOW },
  });
}

/** `swerun run` in the workspace at `server` with --events, fast retries, an 8 s command timeout, then `extra`. */
function seedArgs(space: RunWorkspace, server: OpenAIServer, extra: string[]): string[] {
  return runArgs(space, server, {
    model: extra.includes("--unknown-model") ? "openai/unknown-model" : "openai/test-model",
    config: [
      "model.model_kwargs.temperature=0.2",
      "model.model_kwargs.max_tokens=256",
      "model.retry_min_wait=0.01",
      "model.retry_max_wait=0.02",
      "environment.timeout=8",
    ],
    extra: extra.filter((arg) => arg !== "--unknown-model"),
    events: true,
  });
}

/** A `swerun run` against a fresh local OpenAI server answering `responses`; `interrupt` sends SIGTERM once it has `interrupt` requests. */
async function serverRun(
  name: string,
  dir: string,
  responses: ScriptedResponse[],
  extra: string[] = [],
  interrupt?: number,
): Promise<SeedRun> {
  mkdirSync(dir, { recursive: true });
  const space = prepare(dir);
  const { env } = space;
  const server = await OpenAIServer.start();
  server.push(...responses);
  try {
    const args = seedArgs(space, server, extra);
    let result: { code: number | null; stderr: string };
    if (interrupt === undefined) {
      result = await runCli(args, { cwd: dir, env });
    } else {
      const run = startCli(args, { cwd: dir, env });
      await waitFor(() => server.requests.length >= interrupt, 20_000, run.child);
      run.child.kill("SIGTERM");
      result = await run.done;
    }
    return {
      name,
      dir,
      code: result.code,
      stderr: result.stderr,
      trajectory: join(dir, "run.traj.json"),
      report: join(dir, "run.report.json"),
      events: readEvents(join(dir, "events.jsonl")),
      requests: server.requests.length,
    };
  } finally {
    await server.close();
  }
}

const SUBMIT = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat greeting.txt";

/**
 * The real runs every seed's conformance test reads, recorded at once (in parallel) under `root`:
 * - `full`: a retried request (HTTP 503), a command, a tool call whose arguments are not valid JSON, a reply cut
 *   at the token limit (both format errors), a command that times out, a failing command, and a submission;
 *   prompts grow past 60, 80, 90 and 95% of the context window;
 * - `exhausted`: every attempt fails (HTTP 503, 2 attempts): ModelRetriesExhaustedError, exit code 2; its
 *   model is one no price data knows (a model_lookup_warning), run with `cost_tracking: ignore_errors`;
 * - `repeated`: the same reply without a command three times: identical format errors, RepeatedFormatError;
 * - `timelimit`: the run's time limit (1 s) runs out during a command: TimeExceeded;
 * - `limit`: the step limit (1) ends the run: LimitsExceeded, exit code 0;
 * - `error`: the environment's startup command fails before the agent starts: exit code 1;
 * - `interrupted`: SIGTERM while the model is thinking: UserInterruption, exit code 0;
 * - `scripted`: the bundled demo (a scripted model, no HTTP);
 * - `batch`: the scripted demo batch (`swerun swebench --subset demo`), three instances as child swarms.
 */
export async function recordSeedRuns(root: string): Promise<Record<string, SeedRun>> {
  const full = serverRun("full", join(root, "full"), [
    {
      status: 503,
      headers: { "retry-after": "0" },
      body: { error: { message: "the server is overloaded" } },
    },
    {
      body: completion({
        content: "Let me read the file.",
        toolCalls: [toolCall("call_1", { command: "cat greeting.txt" })],
        message: { reasoning_content: "I read greeting.txt before changing it." },
        usage: usage(1000),
      }),
    },
    { body: completion({ toolCalls: [toolCall("call_2", '{"command": "ls')], usage: usage(2500) }) },
    { body: completion({ content: "I will explain at length", finishReason: "length", usage: usage(2600) }) },
    { body: completion({ toolCalls: [toolCall("call_4", { command: "sleep 30" })], usage: usage(3300) }) },
    {
      body: completion({
        content: "Fixing it.",
        toolCalls: [
          toolCall("call_5", { command: "printf 'hello, world\\n' > greeting.txt" }),
          // 14 lines (a long code preview), exits 1 (a failed command)
          toolCall("call_6", {
            command: `grep -q missing greeting.txt\n${"# checked\n".repeat(12)}test -z done`,
          }),
        ],
        usage: usage(3500),
      }),
    },
    { body: completion({ toolCalls: [toolCall("call_7", { command: SUBMIT })], usage: usage(3700, 30) }) },
  ]);
  const overloaded = {
    status: 503,
    headers: { "retry-after": "0" },
    body: { error: { message: "overloaded" } },
  };
  const exhausted = serverRun(
    "exhausted",
    join(root, "exhausted"),
    [overloaded, overloaded],
    // A model no price data knows runs only with cost tracking off (otherwise it is refused before any request).
    ["-c", "model.retry_attempts=2", "-c", "model.cost_tracking=ignore_errors", "--unknown-model"],
  );
  // Three identical replies without a command: the same format error three times (RepeatedFormatError).
  const repeated = serverRun(
    "repeated",
    join(root, "repeated"),
    [1, 2, 3].map(() => ({ body: completion({ content: "Let me think it over.", usage: usage(600) }) })),
  );
  const timeLimit = serverRun(
    "timelimit",
    join(root, "timelimit"),
    [{ body: completion({ toolCalls: [toolCall("call_1", { command: "sleep 2" })], usage: usage(500) }) }],
    ["-c", "agent.wall_time_limit_seconds=1"],
  );
  const limit = serverRun(
    "limit",
    join(root, "limit"),
    [{ body: completion({ toolCalls: [toolCall("call_1", { command: "ls" })], usage: usage(500) }) }],
    ["-c", "agent.step_limit=1"],
  );
  const error = serverRun("error", join(root, "error"), [], ["-c", "run.env_startup_command=exit 3"]);
  const interrupted = serverRun(
    "interrupted",
    join(root, "interrupted"),
    [
      { body: completion({ toolCalls: [toolCall("call_1", { command: "ls" })], usage: usage(700) }) },
      { stall: true },
    ],
    [],
    2,
  );
  const scripted = (async (): Promise<SeedRun> => {
    const dir = join(root, "scripted");
    mkdirSync(dir, { recursive: true });
    const args = ["run", "-c", "demo", "--yolo", "--exit-immediately", "-o", join(dir, "run.traj.json")];
    const result = await runCli(
      [...args, "--report", join(dir, "run.report.json"), "--events", join(dir, "events.jsonl")],
      { cwd: dir },
    );
    return {
      name: "scripted",
      dir,
      code: result.code,
      stderr: result.stderr,
      trajectory: join(dir, "run.traj.json"),
      report: join(dir, "run.report.json"),
      events: readEvents(join(dir, "events.jsonl")),
      requests: 0,
    };
  })();
  const batch = (async (): Promise<SeedRun> => {
    const dir = join(root, "batch");
    mkdirSync(dir, { recursive: true });
    const out = join(dir, "out");
    const events = join(dir, "events.jsonl");
    const result = await runCli(
      [
        "swebench",
        "--subset",
        "demo",
        "--environment-class",
        "local",
        "-w",
        "2",
        "-o",
        out,
        "-q",
        "--events",
        events,
      ],
      { cwd: dir },
    );
    return {
      name: "batch",
      dir,
      code: result.code,
      stderr: result.stderr,
      trajectory: out,
      events: readEvents(events),
      requests: 0,
    };
  })();
  const runs = await Promise.all([
    full,
    exhausted,
    repeated,
    timeLimit,
    limit,
    error,
    interrupted,
    scripted,
    batch,
  ]);
  return Object.fromEntries(runs.map((run) => [run.name, run]));
}
