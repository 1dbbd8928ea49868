import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { messagesRequestProblem } from "./anthropic-checks.js";
import { sigV4Problem, stsGrantProblem } from "./cloud-auth.js";

/** One scripted answer: a body (or a function of the request body), with a status and headers. */
export interface ScriptedAnswer {
  status?: number;
  headers?: Record<string, string>;
  // biome-ignore lint/suspicious/noExplicitAny: scripted bodies are arbitrary JSON
  body?: unknown | ((request: any) => unknown);
}

/** A request the server received. */
export interface CapturedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  // biome-ignore lint/suspicious/noExplicitAny: request bodies are arbitrary JSON
  body: any;
}

/** Who may call the server, as each cloud authenticates. */
export interface ServerAuth {
  /** Anthropic's API: the `x-api-key` it accepts. */
  apiKey?: string;
  /** Bedrock: the access key pair whose SigV4 signatures it accepts. */
  aws?: { accessKey: string; secretKey: string };
  /** Vertex: the subject token its STS endpoint (`/token`) exchanges for an access token. */
  google?: { subjectToken: string };
}

const ROUTES = {
  anthropic: /^\/v1\/messages$/,
  bedrock: /^\/model\/([^/]+)\/invoke$/,
  vertex: /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/anthropic\/models\/([^/:]+):rawPredict$/,
};
const VERSIONS = { anthropic: "2023-06-01", bedrock: "bedrock-2023-05-31", vertex: "vertex-2023-10-16" };
/** The access token the `/token` endpoint issues. */
export const GOOGLE_TOKEN = "ya29.swerun-test-access-token";

/**
 * A local stand-in for Anthropic's Messages API on 127.0.0.1, at its three addresses: Anthropic's own
 * (`/v1/messages`, `x-api-key` and `anthropic-version`), Bedrock's invoke path (SigV4-signed, the version in
 * the body) and Vertex AI's rawPredict path (a Google access token from its STS endpoint, `/token`). It refuses
 * what the API refuses (see anthropic-checks.ts) with the API's error shape, and answers valid requests from
 * a queue of scripted answers, recording every request.
 */
export class AnthropicServer {
  readonly requests: CapturedRequest[] = [];
  readonly #queue: ScriptedAnswer[] = [];
  readonly #server: Server;
  readonly #auth: ServerAuth;
  /** The server's root URL (no path). */
  url = "";

  private constructor(auth: ServerAuth) {
    this.#auth = auth;
    this.#server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () =>
        this.#handle(
          request.method ?? "",
          request.url ?? "",
          request.headers,
          Buffer.concat(chunks),
          response,
        ),
      );
    });
  }

  static async start(auth: ServerAuth = {}): Promise<AnthropicServer> {
    const server = new AnthropicServer(auth);
    await new Promise<void>((resolve) => server.#server.listen(0, "127.0.0.1", resolve));
    server.url = `http://127.0.0.1:${(server.#server.address() as AddressInfo).port}`;
    return server;
  }

  push(...answers: ScriptedAnswer[]): this {
    this.#queue.push(...answers);
    return this;
  }

  /** Scripted answers not yet given. */
  get pending(): number {
    return this.#queue.length;
  }

  #handle(
    method: string,
    rawUrl: string,
    headers: IncomingHttpHeaders,
    raw: Buffer,
    response: ServerResponse,
  ): void {
    const [path = "", query = ""] = rawUrl.split("?");
    const reply =
      path === "/token"
        ? this.#token(raw.toString("utf8"))
        : this.#answer(method, rawUrl, path, query, headers, raw);
    response.writeHead(reply.status, {
      "content-type": "application/json",
      "request-id": "req_test",
      ...reply.headers,
    });
    response.end(JSON.stringify(reply.body));
  }

  #answer(
    method: string,
    rawUrl: string,
    path: string,
    query: string,
    headers: IncomingHttpHeaders,
    raw: Buffer,
  ): Reply {
    let body: unknown;
    try {
      body = JSON.parse(raw.toString("utf8"));
    } catch {
      return error(400, "invalid_request_error", "the request body is not valid JSON");
    }
    this.requests.push({
      method,
      path,
      query: Object.fromEntries(new URLSearchParams(query)),
      headers,
      body,
    });
    const route = Object.entries(ROUTES).find(([, pattern]) => pattern.test(decodeURIComponent(path)))?.[0];
    if (method !== "POST" || !route) return error(404, "not_found_error", `no route ${method} ${path}`);
    const denied = this.#authProblem(route, method, rawUrl, headers, raw);
    if (denied) return error(denied.status, denied.type, denied.message);
    const version =
      route === "anthropic"
        ? headers["anthropic-version"]
        : (body as { anthropic_version?: unknown }).anthropic_version;
    const expectedVersion = VERSIONS[route as keyof typeof VERSIONS];
    if (version !== expectedVersion)
      return error(
        400,
        "invalid_request_error",
        `anthropic-version: expected ${expectedVersion}, got ${String(version)}`,
      );
    const problem = messagesRequestProblem(body, { modelInBody: route === "anthropic" });
    if (problem) return error(400, "invalid_request_error", problem);
    const answer = this.#queue.shift();
    if (!answer) return error(500, "api_error", "anthropic-server: no scripted answer left");
    const answerBody = typeof answer.body === "function" ? answer.body(body) : answer.body;
    return { status: answer.status ?? 200, headers: answer.headers ?? {}, body: answerBody ?? {} };
  }

  #authProblem(route: string, method: string, rawUrl: string, headers: IncomingHttpHeaders, raw: Buffer) {
    const auth = this.#auth;
    if (route === "anthropic" && auth.apiKey !== undefined && headers["x-api-key"] !== auth.apiKey)
      return { status: 401, type: "authentication_error", message: "invalid x-api-key" };
    if (route === "bedrock" && auth.aws) {
      const problem = sigV4Problem(method, rawUrl, headers, raw, { ...auth.aws, service: "bedrock" });
      if (problem) return { status: 403, type: "permission_error", message: problem };
    }
    if (route === "vertex" && auth.google && headers.authorization !== `Bearer ${GOOGLE_TOKEN}`)
      return {
        status: 401,
        type: "authentication_error",
        message: "Request had invalid authentication credentials.",
      };
    return undefined;
  }

  #token(form: string): Reply {
    const google = this.#auth.google;
    const problem = google ? stsGrantProblem(form, google) : "no workload identity pool";
    return problem
      ? { status: 400, headers: {}, body: { error: problem } }
      : {
          status: 200,
          headers: {},
          body: { access_token: GOOGLE_TOKEN, expires_in: 3600, token_type: "Bearer" },
        };
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

interface Reply {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** An error in the Messages API's shape. */
function error(status: number, type: string, message: string): Reply {
  return { status, headers: {}, body: { type: "error", error: { type, message } } };
}
