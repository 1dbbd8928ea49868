import { openaiError } from "./chat-server.js";
import { type Incoming, type Reply, ScriptedServer } from "./scripted-server.js";

// biome-ignore lint/suspicious/noExplicitAny: request bodies are arbitrary JSON
type Item = any;

/** The fields OpenAI's Responses API takes on each input item type (anything else: "Unknown parameter"). */
const ITEM_FIELDS: Record<string, Set<string>> = {
  message: new Set(["type", "id", "role", "content", "status", "phase"]),
  reasoning: new Set(["type", "id", "summary", "encrypted_content", "content", "status"]),
  function_call: new Set(["type", "id", "call_id", "name", "arguments", "status"]),
  function_call_output: new Set(["type", "id", "call_id", "output", "status"]),
};

/**
 * Why OpenAI's Responses API would refuse this body (its 400 messages), or undefined: unknown fields on an
 * input item, a reasoning item that is not followed by the item it led to, or sent back without its
 * `encrypted_content` when `store` is false (nothing is kept server-side then), a function call output
 * without its call, and a function call without its output.
 */
export function responsesRequestProblem(body: Item): string | undefined {
  if (typeof body?.model !== "string") return "Missing required parameter: 'model'.";
  if (!Array.isArray(body.input)) return "Invalid type for 'input': expected an array.";
  const calls = new Set<string>();
  const outputs = new Set<string>();
  for (const [index, item] of (body.input as Item[]).entries()) {
    const type = item.type ?? (item.role ? "message" : undefined);
    const fields = ITEM_FIELDS[type];
    if (!fields)
      return `Invalid value: '${type}'. Supported values are: 'message', 'reasoning', 'function_call' and 'function_call_output'.`;
    for (const key of Object.keys(item))
      if (!fields.has(key)) return `Unknown parameter: 'input[${index}].${key}'.`;
    if (type === "message" && !["system", "developer", "user", "assistant"].includes(item.role))
      return `Invalid value: '${item.role}'. Supported values are: 'assistant', 'system', 'developer', and 'user'.`;
    if (type === "reasoning") {
      if (body.store === false && typeof item.encrypted_content !== "string")
        return `Item with id '${item.id}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`;
      const next = body.input[index + 1];
      if (!next || next.type === "reasoning" || next.type === "function_call_output" || next.role === "user")
        return `Item '${item.id}' of type 'reasoning' was provided without its required following item.`;
    }
    if (type === "function_call") calls.add(item.call_id);
    if (type === "function_call_output") {
      if (!calls.has(item.call_id))
        return `No tool call found for function call output with call_id ${item.call_id}.`;
      outputs.add(item.call_id);
    }
  }
  for (const call of calls) if (!outputs.has(call)) return `No tool output found for function call ${call}.`;
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    if (tool.type === "function" && (typeof tool.name !== "string" || "function" in tool))
      return "Missing required parameter: 'tools[0].name'.";
  }
  return undefined;
}

/** Where a gateway serves the Responses API, and the header its key goes in. */
export interface ResponsesServerOptions {
  /** The path answered (default OpenAI's `/v1/responses`; OpenRouter's is `/api/v1/responses`). */
  path?: string;
  /** The header the key must be in: `authorization` as a bearer token (default), or e.g. Portkey's `x-portkey-api-key`. */
  authHeader?: string;
}

/**
 * A local stand-in for OpenAI's Responses API (`POST /v1/responses`, a bearer key) on 127.0.0.1: it refuses
 * what the API refuses (responsesRequestProblem) in OpenAI's error shape, and answers valid requests from a
 * queue of scripted answers, recording every request.
 */
export class ResponsesServer extends ScriptedServer {
  readonly #key: string | undefined;
  readonly #options: ResponsesServerOptions;

  private constructor(key: string | undefined, options: ResponsesServerOptions) {
    super();
    this.#key = key;
    this.#options = options;
  }

  /** Starts a server; its `url` is the base URL to configure, ending in /v1 (the path's folder). */
  static start(key?: string, options: ResponsesServerOptions = {}): Promise<ResponsesServer> {
    return new ResponsesServer(key, options).listen(
      (options.path ?? "/v1/responses").replace(/\/responses$/, ""),
    );
  }

  protected override reply(request: Incoming): Reply {
    const received = this.receive(request);
    if (!received) return openaiError(400, "We could not parse the JSON body of your request.");
    const { method, path, headers } = request;
    if (method !== "POST" || path !== (this.#options.path ?? "/v1/responses"))
      return openaiError(404, `Invalid URL (${method} ${path})`);
    const authHeader = this.#options.authHeader ?? "authorization";
    const want = authHeader === "authorization" ? `Bearer ${this.#key}` : this.#key;
    if (this.#key !== undefined && headers[authHeader] !== want)
      return openaiError(401, "Incorrect API key provided.");
    const problem = responsesRequestProblem(received.body);
    if (problem) return openaiError(400, problem);
    return this.next(received.body) ?? openaiError(500, "responses-server: no scripted answer left");
  }
}
