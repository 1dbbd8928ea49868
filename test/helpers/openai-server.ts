import { writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, vi } from "vitest";
import { modelSchema } from "../../src/config/model.js";
import type { AgentEvent } from "../../src/events.js";
import { resetGlobalModelStats } from "../../src/models/global-stats.js";
import { OpenAIModel } from "../../src/models/openai.js";
import { tempDirForFile } from "./tmp.js";

/** One scripted answer of the fake endpoint. */
export interface ScriptedResponse {
  /** HTTP status, 200 unless given. */
  status?: number;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  /** Never answer: the request hangs until the client gives up or the server closes. */
  stall?: boolean;
  /** Send status and headers, then never finish the body. */
  stallBody?: boolean;
  /** Send the first half of the body and end the response cleanly: cut-off JSON under the given status. */
  truncateBody?: boolean;
  /** Announce the whole body's length, send its first half, then drop the connection (a cut mid-body). */
  cutBody?: boolean;
}

/** A request the server received, body parsed as JSON. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary request fields
  body: any;
}

/**
 * A tiny OpenAI-compatible server on 127.0.0.1 (random port): `POST /v1/chat/completions` answers from
 * a queue of scripted responses and records every request. With the queue empty it answers 400.
 */
export class OpenAIServer {
  readonly requests: RecordedRequest[] = [];
  readonly #queue: ScriptedResponse[] = [];
  readonly #server: Server;
  readonly #stalled = new Set<ServerResponse>();
  /** The base URL to configure, ending in /v1. */
  url = "";

  private constructor() {
    this.#server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // keep the raw text
        }
        this.requests.push({
          method: request.method ?? "",
          url: request.url ?? "",
          headers: request.headers,
          body,
        });
        this.#answer(request.url ?? "", response);
      });
    });
  }

  static async start(): Promise<OpenAIServer> {
    const server = new OpenAIServer();
    await new Promise<void>((resolve) => server.#server.listen(0, "127.0.0.1", resolve));
    const { port } = server.#server.address() as AddressInfo;
    server.url = `http://127.0.0.1:${port}/v1`;
    return server;
  }

  /** Queues responses, answered in order. */
  push(...responses: ScriptedResponse[]): this {
    this.#queue.push(...responses);
    return this;
  }

  #answer(url: string, response: ServerResponse): void {
    const scripted = url === "/v1/chat/completions" ? this.#queue.shift() : undefined;
    if (!scripted) {
      const message = url === "/v1/chat/completions" ? "no scripted response left" : `no route ${url}`;
      response.writeHead(url === "/v1/chat/completions" ? 400 : 404, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: `openai-server: ${message}` } }));
      return;
    }
    if (scripted.stall) {
      this.#stalled.add(response);
      return;
    }
    const text = JSON.stringify(scripted.body ?? {});
    if (scripted.cutBody) {
      response.writeHead(scripted.status ?? 200, {
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(text)),
        ...scripted.headers,
      });
      response.write(text.slice(0, Math.floor(text.length / 2)), () => response.socket?.destroy());
      return;
    }
    response.writeHead(scripted.status ?? 200, { "content-type": "application/json", ...scripted.headers });
    if (scripted.truncateBody) {
      response.end(text.slice(0, Math.floor(text.length / 2)));
      return;
    }
    if (scripted.stallBody) {
      response.write(text.slice(0, Math.floor(text.length / 2)));
      this.#stalled.add(response);
      return;
    }
    response.end(text);
  }

  async close(): Promise<void> {
    for (const response of this.#stalled) response.destroy();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** A tool call in the OpenAI shape; `args` is sent as given when it is a string, else as JSON. */
export function toolCall(id: string, args: unknown, name = "bash") {
  return {
    id,
    type: "function",
    function: { name, arguments: typeof args === "string" ? args : JSON.stringify(args) },
  };
}

/** A chat completion body with one choice. */
export function completion(
  options: {
    content?: string | null;
    toolCalls?: unknown[];
    finishReason?: string;
    usage?: Record<string, unknown>;
    message?: Record<string, unknown>;
  } = {},
) {
  const message: Record<string, unknown> = {
    role: "assistant",
    content: options.content ?? null,
    refusal: null,
    ...(options.toolCalls ? { tool_calls: options.toolCalls } : {}),
    ...options.message,
  };
  return {
    id: "chatcmpl-test",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "test-model",
    choices: [
      {
        index: 0,
        message,
        finish_reason: options.finishReason ?? (options.toolCalls ? "tool_calls" : "stop"),
      },
    ],
    usage: options.usage ?? { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 },
  };
}

/** The API key the tests use; no output may contain it. */
export const TEST_KEY = "sk-swerun-test-7f3a9c1e5b2d4860";

/** Templates that show what the model saw. */
export const TEST_TEMPLATES = {
  observation_template: "<returncode>{{ output.returncode }}</returncode>{{ output.output }}",
  format_error_template:
    "ERROR: {{ error }} | actions={{ actions | length }} | {% if has_tool_calls %}with tools{% else %}no tools{% endif %} | finish={{ finish_reason }}",
};

/** A price registry entry for `openai/test-model`: $1 per million input tokens, $2 per million output tokens. */
export const TEST_PRICES = {
  "openai/test-model": {
    input_cost_per_token: 1e-6,
    output_cost_per_token: 2e-6,
    cache_read_input_token_cost: 1e-7,
    cache_creation_input_token_cost: 1.25e-6,
    litellm_provider: "openai",
    mode: "chat",
  },
};

/** A fresh directory standing in for the current directory and the global config dir; no real settings leak in. */
export function isolatedSettings(env: Record<string, string> = {}) {
  const dir = tempDirForFile("swerun-openai-");
  return { dir, settings: { env: { SWERUN_GLOBAL_CONFIG_DIR: dir, ...env }, cwd: dir } };
}

/**
 * An OpenAIModel for `openai/test-model` at the fake server, with the test key, the test price registry,
 * short retry waits, and its events collected. `overrides` replace config keys; model_kwargs merge.
 */
export async function testModel(
  server: OpenAIServer,
  overrides: Record<string, unknown> = {},
  options: { textBased?: boolean; env?: Record<string, string> } = {},
) {
  resetGlobalModelStats();
  const { dir, settings } = isolatedSettings({ OPENAI_API_KEY: TEST_KEY, ...options.env });
  const registry = join(dir, "prices.json");
  writeFileSync(registry, JSON.stringify(TEST_PRICES));
  const { model_kwargs, ...rest } = overrides;
  const config = modelSchema.parse({
    model_name: "openai/test-model",
    model_class: options.textBased ? "openai_textbased" : "openai",
    ...TEST_TEMPLATES,
    litellm_model_registry: registry,
    retry_min_wait: 0.01,
    retry_max_wait: 0.02,
    request_timeout: 5,
    cost_tracking: "default",
    ...rest,
    model_kwargs: { api_base: server.url, ...(model_kwargs as Record<string, unknown> | undefined) },
  });
  const events: AgentEvent[] = [];
  const model = await OpenAIModel.create(config, {
    textBased: options.textBased ?? false,
    emit: (event) => events.push(event),
    settings,
  });
  return { model, events, dir };
}

/**
 * One fresh server per test, with swerun's global settings isolated (and `env` stubbed): the returned
 * object stands for the current test's server, so test bodies just use `server.push(...)`, `server.url`.
 */
export function useOpenAIServer(env: Record<string, string> = {}): OpenAIServer {
  let current: OpenAIServer | undefined;
  beforeEach(async () => {
    vi.stubEnv("SWERUN_GLOBAL_CONFIG_DIR", isolatedSettings().dir);
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    current = await OpenAIServer.start();
  });
  afterEach(async () => {
    await current?.close();
    current = undefined;
    vi.unstubAllEnvs();
  });
  return new Proxy({} as OpenAIServer, {
    get(_target, key) {
      if (!current) throw new Error("useOpenAIServer: the server exists only inside a test");
      const value = Reflect.get(current, key, current);
      return typeof value === "function" ? value.bind(current) : value;
    },
  });
}
