/**
 * Cost and per-call overhead of the provider paths (`npm run bench:cost`, `node dist/bench/cost.js [calls]`).
 *
 * 1. Dollars: the scripted 60-step SWE-bench-shaped run of test/fixtures/providers (a ~3k-token prompt growing
 *    ~1.1k tokens a step, Claude Sonnet 4.5) against a local Messages API that accounts for prompt caching as
 *    Anthropic does (test/helpers/anthropic-cache.ts: a prefix written before is read, the rest up to the mark
 *    written). swerun's total cost against mini-swe-agent 2.4.6 + litellm's on the same server (the committed
 *    fixture `anthropic-swebench-60.costs.json`, from scripts/gen-provider-fixtures.py), call for call; and the
 *    same tokens priced uncached, as Anthropic's OpenAI-compatible endpoint (which ignores cache_control) charges.
 * 2. Overhead: one model call's wall time on each provider path (a 20-message conversation, ~4 KB per output,
 *    a local server answering at once) against the OpenAI chat-completions path, measured in the same run,
 *    interleaved rounds, medians.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { modelSchema } from "../src/config/model.js";
import type { Message } from "../src/messages.js";
import { resetGlobalModelStats } from "../src/models/global-stats.js";
import { createModel } from "../src/models/index.js";
import type { Model } from "../src/models/model.js";
import { PromptCache } from "../test/helpers/anthropic-cache.js";
import { AnthropicServer } from "../test/helpers/anthropic-server.js";
import { ChatServer } from "../test/helpers/chat-server.js";
import { externalAccount } from "../test/helpers/cloud-auth.js";
import {
  FIXTURE_KEY,
  PROVIDER_FIXTURES,
  providerCase,
  runProviderCase,
} from "../test/helpers/provider-fixtures.js";
import { ResponsesServer } from "../test/helpers/responses-server.js";
import type { ScriptedAnswer } from "../test/helpers/scripted-server.js";

const CALLS = Number(process.argv[2] ?? 200);
const ROUNDS = 5;
const PER_ROUND = Math.ceil(CALLS / ROUNDS);
const WARM_UP = 20;
const SONNET = { input: 3e-6, output: 15e-6 };

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Part 1: the 60-step run's dollars, swerun against mini-swe-agent + litellm. */
async function dollars(): Promise<void> {
  const fixture = providerCase("anthropic-swebench-60");
  const mini = JSON.parse(
    readFileSync(join(PROVIDER_FIXTURES, "expected", "anthropic-swebench-60.costs.json"), "utf8"),
  );
  const server = await AnthropicServer.start({ apiKey: FIXTURE_KEY });
  const cache = new PromptCache();
  server.push(
    ...fixture.replies.map(
      (reply): ScriptedAnswer => ({
        body: (request: unknown) => {
          const { output_tokens, ...message } = reply as { output_tokens: number };
          return { ...message, usage: cache.usage(request, output_tokens) };
        },
      }),
    ),
  );
  process.env.SWERUN_GLOBAL_CONFIG_DIR = mkdtempSync(join(tmpdir(), "swerun-bench-cost-"));
  process.env.ANTHROPIC_API_KEY = FIXTURE_KEY;
  process.env.ANTHROPIC_API_BASE = server.url;
  const { trajectory } = await runProviderCase(fixture, server.url);
  await server.close();
  const calls = (trajectory.messages as Message[])
    .filter((m) => m.role === "assistant")
    .map((m) => ({
      usage: (m.extra?.response as { usage: Record<string, number> } | undefined)?.usage ?? {},
    }));
  const sameTokens = calls.every((call, i) => {
    const theirs = mini.calls[i];
    return (
      theirs &&
      call.usage.prompt_tokens === theirs.prompt_tokens &&
      call.usage.cache_creation_input_tokens === theirs.cache_creation_input_tokens &&
      call.usage.cache_read_input_tokens === theirs.cache_read_input_tokens
    );
  });
  const ours = trajectory.info.model_stats.instance_cost as number;
  const uncached = calls.reduce(
    (sum, call) =>
      sum +
      (call.usage.prompt_tokens ?? 0) * SONNET.input +
      (call.usage.completion_tokens ?? 0) * SONNET.output,
    0,
  );
  const line = (label: string, cost: number) =>
    `| ${label} | ${cost.toFixed(4)} | ${(cost / mini.instance_cost).toFixed(4)}x |\n`;
  process.stdout.write(
    `60-step SWE-bench-shaped run, Claude Sonnet 4.5, ${calls.length} calls (${trajectory.info.exit_status}); ` +
      `cache reads and writes call for call the same as mini-swe-agent's: ${sameTokens ? "yes" : "NO"}\n\n` +
      "| run | dollars | vs mini-swe-agent + litellm |\n| :--- | ---: | ---: |\n" +
      line("mini-swe-agent 2.4.6 + litellm (fixture)", mini.instance_cost) +
      line("swerun, Anthropic's Messages API", ours) +
      line("the same tokens uncached (OpenAI-compatible endpoint)", uncached) +
      "\n",
  );
  if (!sameTokens || ours / mini.instance_cost > 1.02) process.exitCode = 1;
}

/** A 20-message conversation in the chat shape (system, task, 9 tool calls with ~4 KB outputs). */
function chatHistory(): Message[] {
  const messages: Message[] = [
    { role: "system", content: "You are a test agent. ".repeat(200) },
    { role: "user", content: "Fix the bug. ".repeat(100) },
  ];
  for (let i = 0; i < 9; i++) {
    const id = `call_${i}`;
    messages.push({
      role: "assistant",
      content: `Step ${i}.`,
      tool_calls: [
        {
          id,
          type: "function",
          function: { name: "bash", arguments: JSON.stringify({ command: `cat f${i}` }) },
        },
      ],
    });
    messages.push({ role: "tool", tool_call_id: id, content: `line ${i}\n`.repeat(500) });
  }
  return messages;
}

/** The same conversation as the Responses API records it. */
function responsesHistory(): Message[] {
  const [system, task, ...rest] = chatHistory();
  const messages: Message[] = [system as Message, task as Message];
  for (let i = 0; i < rest.length; i += 2) {
    const id = `call_${i}`;
    messages.push({
      role: "assistant",
      object: "response",
      output: [
        {
          type: "function_call",
          id: `fc_${i}`,
          call_id: id,
          name: "bash",
          arguments: JSON.stringify({ command: "ls" }),
        },
      ],
      content: undefined,
    } as Message);
    messages.push({
      role: "tool",
      type: "function_call_output",
      call_id: id,
      output: rest[i + 1]?.content,
      content: undefined,
    } as Message);
  }
  return messages;
}

const ANTHROPIC_REPLY = {
  id: "msg_b",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5-20250929",
  content: [{ type: "tool_use", id: "toolu_b", name: "bash", input: { command: "ls" } }],
  stop_reason: "tool_use",
  stop_sequence: null,
  usage: { input_tokens: 5000, output_tokens: 50 },
};
const CHAT_REPLY = {
  id: "chatcmpl-b",
  object: "chat.completion",
  created: 1,
  model: "gpt-4o",
  choices: [
    {
      index: 0,
      finish_reason: "tool_calls",
      message: {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c", type: "function", function: { name: "bash", arguments: '{"command":"ls"}' } },
        ],
      },
    },
  ],
  usage: { prompt_tokens: 5000, completion_tokens: 50, total_tokens: 5050 },
};
const RESPONSES_REPLY = {
  id: "resp_b",
  object: "response",
  status: "completed",
  model: "gpt-5-codex",
  output: [
    {
      type: "function_call",
      id: "fc",
      call_id: "c",
      name: "bash",
      arguments: '{"command":"ls"}',
      status: "completed",
    },
  ],
  usage: { input_tokens: 5000, output_tokens: 50, total_tokens: 5050 },
};

interface Path {
  label: string;
  model: Model;
  history: Message[];
  refill(): void;
  close(): Promise<void>;
}

async function paths(): Promise<Path[]> {
  const dir = mkdtempSync(join(tmpdir(), "swerun-bench-paths-"));
  const aws = { accessKey: "AKIASWERUNBENCH00001", secretKey: "swerun/bench/secret/0123456789abcdef" };
  const anthropic = await AnthropicServer.start({
    apiKey: FIXTURE_KEY,
    aws,
    google: { subjectToken: "bench-oidc" },
  });
  const chat = await ChatServer.start({ path: /^\/v1\/chat\/completions$/ });
  const azure = await ChatServer.start({
    path: /^\/openai\/deployments\/[^/]+\/chat\/completions$/,
    query: ["api-version"],
  });
  const responses = await ResponsesServer.start(FIXTURE_KEY);
  writeFileSync(join(dir, "oidc"), "bench-oidc");
  writeFileSync(
    join(dir, "adc.json"),
    JSON.stringify(externalAccount(`${anthropic.url}/token`, join(dir, "oidc"))),
  );
  Object.assign(process.env, {
    OPENAI_API_KEY: FIXTURE_KEY,
    ANTHROPIC_API_KEY: FIXTURE_KEY,
    AZURE_API_KEY: FIXTURE_KEY,
    AZURE_API_BASE: azure.url,
    AWS_ACCESS_KEY_ID: aws.accessKey,
    AWS_SECRET_ACCESS_KEY: aws.secretKey,
    AWS_REGION: "us-east-1",
    AWS_BEDROCK_RUNTIME_ENDPOINT: anthropic.url,
    VERTEXAI_PROJECT: "bench",
    VERTEXAI_LOCATION: "us-east5",
    GOOGLE_APPLICATION_CREDENTIALS: join(dir, "adc.json"),
  });
  const make = async (model_name: string, extra: Record<string, unknown> = {}) =>
    createModel(
      modelSchema.parse({ model_name, cost_tracking: "ignore_errors", retry_attempts: 1, ...extra }),
    );
  const refill = (server: { push(...a: ScriptedAnswer[]): unknown }, body: unknown) => () => {
    for (let i = 0; i < WARM_UP + PER_ROUND * ROUNDS; i++) server.push({ body });
  };
  const none = async () => {};
  return [
    {
      label: "OpenAI chat completions (floor)",
      model: await make("openai/gpt-4o", { model_kwargs: { api_base: `${chat.url}/v1` } }),
      history: chatHistory(),
      refill: refill(chat, CHAT_REPLY),
      close: () => chat.close(),
    },
    {
      label: "Anthropic Messages API",
      model: await make("anthropic/claude-sonnet-4-5-20250929", {
        model_kwargs: { api_base: anthropic.url },
      }),
      history: chatHistory(),
      refill: refill(anthropic, ANTHROPIC_REPLY),
      close: none,
    },
    {
      label: "Claude on Bedrock (SigV4)",
      model: await make("bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0"),
      history: chatHistory(),
      refill: refill(anthropic, ANTHROPIC_REPLY),
      close: none,
    },
    {
      label: "Claude on Vertex AI",
      model: await make("vertex_ai/claude-sonnet-4-5@20250929", {
        model_kwargs: { api_base: anthropic.url },
      }),
      history: chatHistory(),
      refill: refill(anthropic, ANTHROPIC_REPLY),
      close: () => anthropic.close(),
    },
    {
      label: "Azure OpenAI",
      model: await make("azure/bench"),
      history: chatHistory(),
      refill: refill(azure, CHAT_REPLY),
      close: () => azure.close(),
    },
    {
      label: "OpenAI Responses API",
      model: await make("openai/gpt-5-codex", {
        model_class: "responses",
        model_kwargs: { api_base: responses.url },
      }),
      history: responsesHistory(),
      refill: refill(responses, RESPONSES_REPLY),
      close: () => responses.close(),
    },
  ];
}

/** Part 2: milliseconds per call on each path, interleaved rounds, against the OpenAI path. */
async function overhead(): Promise<void> {
  const all = await paths();
  const times = new Map<string, number[]>(all.map((p) => [p.label, []]));
  for (const path of all) {
    path.refill();
    for (let i = 0; i < WARM_UP; i++) await path.model.query(path.history);
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const path of all) {
      resetGlobalModelStats();
      for (let i = 0; i < PER_ROUND; i++) {
        const started = process.hrtime.bigint();
        await path.model.query(path.history);
        times.get(path.label)?.push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    }
  }
  for (const path of all) await path.close();
  const floor = median(times.get(all[0]?.label ?? "") ?? []);
  process.stdout.write(
    `One call, ${CALLS} per path in ${ROUNDS} interleaved rounds (medians):\n\n| path | ms per call | vs OpenAI path |\n| :--- | ---: | ---: |\n`,
  );
  for (const path of all) {
    const ms = median(times.get(path.label) ?? []);
    process.stdout.write(`| ${path.label} | ${ms.toFixed(2)} | ${(ms / floor).toFixed(2)}x |\n`);
  }
}

await dollars();
await overhead();
