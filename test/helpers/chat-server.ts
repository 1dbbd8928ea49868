import { type Incoming, type Reply, ScriptedServer } from "./scripted-server.js";

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

/** An error in the shape of OpenAI's APIs (chat completions, Responses; Azure's and the gateways' too). */
export function openaiError(status: number, message: string): Reply {
  return {
    status,
    headers: {},
    body: { error: { message, type: "invalid_request_error", param: null, code: null } },
  };
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
export class ChatServer extends ScriptedServer {
  readonly #options: ChatServerOptions;

  private constructor(options: ChatServerOptions) {
    super();
    this.#options = options;
  }

  /** Starts a server; its `url` is its root (no path). */
  static start(options: ChatServerOptions): Promise<ChatServer> {
    return new ChatServer(options).listen();
  }

  protected override reply(request: Incoming): Reply {
    const received = this.receive(request);
    if (!received) return openaiError(400, "We could not parse the JSON body of your request.");
    const { method, path, query, headers } = request;
    if (method !== "POST" || !this.#options.path.test(path))
      return openaiError(404, `Resource not found (${method} ${path})`);
    const auth = this.#options.auth;
    if (auth && headers[auth.header] !== auth.value)
      return openaiError(401, "Access denied due to invalid subscription key or wrong API endpoint.");
    for (const name of this.#options.query ?? [])
      if (!query[name]) return openaiError(404, `Missing query parameter ${name}`);
    const problem = chatRequestProblem(received.body);
    if (problem) return openaiError(400, problem);
    return this.next(received.body) ?? openaiError(500, "chat-server: no scripted answer left");
  }
}
