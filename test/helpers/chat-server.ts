import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { CapturedRequest, ScriptedAnswer } from "./anthropic-server.js";

// biome-ignore lint/suspicious/noExplicitAny: request bodies are arbitrary JSON
type Body = any;

/**
 * Why OpenAI's chat completions (and Azure OpenAI's, which checks the same) would refuse this body, or
 * undefined: an assistant message's tool calls must each be answered by the tool messages right after it, and
 * a tool message must answer one of them.
 */
export function chatRequestProblem(body: Body): string | undefined {
  if (!Array.isArray(body?.messages) || body.messages.length === 0)
    return "'messages' must be a non-empty array";
  const messages = body.messages as Body[];
  for (const [index, message] of messages.entries()) {
    if (message.role === "tool") {
      let at = index - 1;
      while (at >= 0 && messages[at].role === "tool") at--;
      const calls = (messages[at]?.tool_calls ?? []).map((call: Body) => call.id);
      if (!calls.includes(message.tool_call_id))
        return `Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.`;
    }
    if (message.role === "assistant" && Array.isArray(message.tool_calls)) {
      const answered = new Set<string>();
      for (let at = index + 1; at < messages.length && messages[at].role === "tool"; at++)
        answered.add(messages[at].tool_call_id);
      const missing = message.tool_calls
        .map((call: Body) => call.id)
        .filter((id: string) => !answered.has(id));
      if (missing.length > 0)
        return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${missing.join(", ")}`;
    }
  }
  return undefined;
}

/** Where a chat-completions server listens and whom it lets in. */
export interface ChatServerOptions {
  /** The path it answers (OpenAI's `/v1/chat/completions`; Azure's deployment path). */
  path: RegExp;
  /** A header that must have this value (`authorization: Bearer <key>`, Azure's `api-key`, Portkey's `x-portkey-api-key`). */
  auth?: { header: string; value: string };
  /** Query parameters that must be there (Azure's `api-version`). */
  query?: string[];
}

/**
 * A local chat-completions endpoint on 127.0.0.1 (OpenAI's shape, at any path: Azure's deployments, a
 * gateway's): it refuses what the API refuses (chatRequestProblem, a missing key or query parameter) in
 * OpenAI's error shape and answers valid requests from a queue of scripted answers, recording every request.
 */
export class ChatServer {
  readonly requests: CapturedRequest[] = [];
  readonly #queue: ScriptedAnswer[] = [];
  readonly #server: Server;
  readonly #options: ChatServerOptions;
  /** The server's root URL (no path). */
  url = "";

  private constructor(options: ChatServerOptions) {
    this.#options = options;
    this.#server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const reply = this.#answer(
          request.method ?? "",
          request.url ?? "",
          request.headers,
          Buffer.concat(chunks),
        );
        response.writeHead(reply.status, { "content-type": "application/json", ...reply.headers });
        response.end(JSON.stringify(reply.body));
      });
    });
  }

  static async start(options: ChatServerOptions): Promise<ChatServer> {
    const server = new ChatServer(options);
    await new Promise<void>((resolve) => server.#server.listen(0, "127.0.0.1", resolve));
    server.url = `http://127.0.0.1:${(server.#server.address() as AddressInfo).port}`;
    return server;
  }

  push(...answers: ScriptedAnswer[]): this {
    this.#queue.push(...answers);
    return this;
  }

  get pending(): number {
    return this.#queue.length;
  }

  #answer(method: string, url: string, headers: IncomingHttpHeaders, raw: Buffer) {
    const fail = (status: number, message: string) => ({
      status,
      headers: {},
      body: { error: { message, type: "invalid_request_error", param: null, code: null } },
    });
    let body: unknown;
    try {
      body = JSON.parse(raw.toString("utf8"));
    } catch {
      return fail(400, "We could not parse the JSON body of your request.");
    }
    const [path = "", search = ""] = url.split("?");
    const query = Object.fromEntries(new URLSearchParams(search));
    this.requests.push({ method, path, query, headers, body });
    if (method !== "POST" || !this.#options.path.test(path))
      return fail(404, `Resource not found (${method} ${path})`);
    const auth = this.#options.auth;
    if (auth && headers[auth.header] !== auth.value)
      return fail(401, "Access denied due to invalid subscription key or wrong API endpoint.");
    for (const name of this.#options.query ?? [])
      if (!query[name]) return fail(404, `Missing query parameter ${name}`);
    const problem = chatRequestProblem(body);
    if (problem) return fail(400, problem);
    const answer = this.#queue.shift();
    if (!answer) return fail(500, "chat-server: no scripted answer left");
    const answerBody = typeof answer.body === "function" ? answer.body(body) : answer.body;
    return { status: answer.status ?? 200, headers: answer.headers ?? {}, body: answerBody ?? {} };
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
