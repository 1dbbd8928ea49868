import { GOOGLE_TOKEN, stsTokenReply } from "./cloud-auth.js";
import { type Incoming, type Reply, ScriptedServer } from "./scripted-server.js";

// biome-ignore lint/suspicious/noExplicitAny: request bodies are arbitrary JSON
type Item = any;

const ROUTE =
  /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/google\/models\/([^/:]+):generateContent$/;

/** Fields of the request and its parts, in both spellings protobuf's JSON parser takes (snake and camel case). */
const spellings = (...names: string[]) =>
  new Set(names.flatMap((name) => [name, name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())]));
const REQUEST_FIELDS = spellings(
  "contents",
  "system_instruction",
  "tools",
  "tool_config",
  "generation_config",
  "safety_settings",
  "labels",
  "cached_content",
);
const PART_DATA = spellings(
  "text",
  "inline_data",
  "file_data",
  "function_call",
  "function_response",
  "executable_code",
  "code_execution_result",
);
const PART_META = spellings("thought", "thought_signature", "video_metadata");
const GENERATION_FIELDS = spellings(
  "temperature",
  "top_p",
  "top_k",
  "candidate_count",
  "max_output_tokens",
  "stop_sequences",
  "presence_penalty",
  "frequency_penalty",
  "seed",
  "response_mime_type",
  "response_schema",
  "thinking_config",
);
const THINKING_FIELDS = spellings("thinking_budget", "include_thoughts", "thinking_level");

const field = (object: Item, name: string) =>
  object?.[name] ?? object?.[name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())];

function unknownField(object: Item, known: Set<string>, where: string): string | undefined {
  const bad = Object.keys(object ?? {}).find((key) => !known.has(key));
  return bad === undefined
    ? undefined
    : `Invalid JSON payload received. Unknown name "${bad}" at '${where}': Cannot find field.`;
}

function partsProblem(content: Item, index: number): string | undefined {
  const parts = content?.parts;
  if (!Array.isArray(parts) || parts.length === 0)
    return `Unable to submit request because it has an empty contents.parts field (contents[${index}]).`;
  for (const [p, part] of parts.entries()) {
    const where = `contents[${index}].parts[${p}]`;
    const unknown = unknownField(part, new Set([...PART_DATA, ...PART_META]), where);
    if (unknown) return unknown;
    const data = Object.keys(part).filter((key) => PART_DATA.has(key));
    if (data.length !== 1)
      return `${where}: a part must hold exactly one of text, function_call, function_response, ...`;
  }
  return undefined;
}

const isCall = (part: Item) => field(part, "function_call") !== undefined;
const isResponse = (part: Item) => field(part, "function_response") !== undefined;

/**
 * Why Vertex AI's generateContent would refuse this body (its 400 messages), or undefined: unknown fields
 * (in either spelling), roles other than user and model, empty or mixed parts, a function call turn that
 * does not follow a user turn or a function response turn, a function call turn not answered by as many
 * function responses, and unknown generation or thinking settings.
 */
export function generateContentProblem(body: Item): string | undefined {
  const unknown = unknownField(body, REQUEST_FIELDS, "request");
  if (unknown) return unknown;
  const contents = body?.contents;
  if (!Array.isArray(contents) || contents.length === 0) return "contents is not specified";
  for (const [index, content] of contents.entries()) {
    if (!["user", "model"].includes(content?.role))
      return `Please use a valid role: user, model. (contents[${index}].role: ${content?.role})`;
    const problem = partsProblem(content, index);
    if (problem) return problem;
    const parts: Item[] = content.parts;
    if (content.role === "model" && parts.some(isCall)) {
      const previous = contents[index - 1];
      if (previous?.role !== "user")
        return "Please ensure that function call turn comes immediately after a user turn or after a function response turn.";
      const next = contents[index + 1];
      const calls = parts.filter(isCall).length;
      if (next && next.parts.filter(isResponse).length !== calls)
        return "Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.";
    }
    if (content.role === "user" && parts.some(isResponse) && !contents[index - 1]?.parts?.some(isCall))
      return "Please ensure that function response turn comes immediately after a function call turn.";
  }
  const generation = field(body, "generation_config");
  const badGeneration = unknownField(generation, GENERATION_FIELDS, "generation_config");
  if (badGeneration) return badGeneration;
  const thinking = field(generation, "thinking_config");
  return unknownField(thinking, THINKING_FIELDS, "generation_config.thinking_config");
}

/**
 * A local stand-in for Vertex AI's generateContent (Gemini) on 127.0.0.1: a Google access token from its STS
 * endpoint (`/token`, as application-default credentials get one), the publisher model path, requests
 * refused as Vertex refuses them (generateContentProblem) in Google's error shape, answers from a queue.
 */
export class GeminiServer extends ScriptedServer {
  readonly #subjectToken: string;

  private constructor(subjectToken: string) {
    super();
    this.#subjectToken = subjectToken;
  }

  /** Starts a server; its `url` is its root (no path). */
  static start(subjectToken: string): Promise<GeminiServer> {
    return new GeminiServer(subjectToken).listen();
  }

  protected override reply(request: Incoming): Reply {
    const fail = (status: number, message: string, code = "INVALID_ARGUMENT") => ({
      status,
      headers: {},
      body: { error: { code: status, message, status: code } },
    });
    const { method, path, headers } = request;
    if (path === "/token")
      return stsTokenReply(request.raw.toString("utf8"), { subjectToken: this.#subjectToken });
    const received = this.receive(request);
    if (!received) return fail(400, "Invalid JSON payload received.");
    if (method !== "POST" || !ROUTE.test(decodeURIComponent(path)))
      return fail(404, `no route ${method} ${path}`, "NOT_FOUND");
    if (headers.authorization !== `Bearer ${GOOGLE_TOKEN}`)
      return fail(401, "Request had invalid authentication credentials.", "UNAUTHENTICATED");
    const problem = generateContentProblem(received.body);
    if (problem) return fail(400, problem);
    return this.next(received.body) ?? fail(500, "gemini-server: no scripted answer left", "INTERNAL");
  }
}
