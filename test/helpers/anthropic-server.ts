import { messagesRequestProblem } from "./anthropic-checks.js";
import { GOOGLE_TOKEN, sigV4Problem, stsTokenReply } from "./cloud-auth.js";
import { type Incoming, type Reply, ScriptedServer } from "./scripted-server.js";

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

/**
 * A local stand-in for Anthropic's Messages API on 127.0.0.1, at its three addresses: Anthropic's own
 * (`/v1/messages`, `x-api-key` and `anthropic-version`), Bedrock's invoke path (SigV4-signed, the version in
 * the body) and Vertex AI's rawPredict path (a Google access token from its STS endpoint, `/token`). It refuses
 * what the API refuses (see anthropic-checks.ts) with the API's error shape, and answers valid requests from
 * a queue of scripted answers, recording every request.
 */
export class AnthropicServer extends ScriptedServer {
  readonly #auth: ServerAuth;

  private constructor(auth: ServerAuth) {
    super({ "request-id": "req_test" });
    this.#auth = auth;
  }

  /** Starts a server; its `url` is its root (no path). */
  static start(auth: ServerAuth = {}): Promise<AnthropicServer> {
    return new AnthropicServer(auth).listen();
  }

  protected override reply(request: Incoming): Reply {
    if (request.path === "/token") return stsTokenReply(request.raw.toString("utf8"), this.#auth.google);
    const received = this.receive(request);
    if (!received) return error(400, "invalid_request_error", "the request body is not valid JSON");
    const { method, path, headers } = request;
    const route = Object.entries(ROUTES).find(([, pattern]) => pattern.test(decodeURIComponent(path)))?.[0];
    if (method !== "POST" || !route) return error(404, "not_found_error", `no route ${method} ${path}`);
    const denied = this.#authProblem(route, request);
    if (denied) return error(denied.status, denied.type, denied.message);
    const version =
      route === "anthropic"
        ? headers["anthropic-version"]
        : (received.body as { anthropic_version?: unknown }).anthropic_version;
    const expectedVersion = VERSIONS[route as keyof typeof VERSIONS];
    if (version !== expectedVersion)
      return error(
        400,
        "invalid_request_error",
        `anthropic-version: expected ${expectedVersion}, got ${String(version)}`,
      );
    const problem = messagesRequestProblem(received.body, { modelInBody: route === "anthropic" });
    if (problem) return error(400, "invalid_request_error", problem);
    return this.next(received.body) ?? error(500, "api_error", "anthropic-server: no scripted answer left");
  }

  #authProblem(route: string, { method, url, headers, raw }: Incoming) {
    const auth = this.#auth;
    if (route === "anthropic" && auth.apiKey !== undefined && headers["x-api-key"] !== auth.apiKey)
      return { status: 401, type: "authentication_error", message: "invalid x-api-key" };
    if (route === "bedrock" && auth.aws) {
      const problem = sigV4Problem(method, url, headers, raw, { ...auth.aws, service: "bedrock" });
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
}

/** An error in the Messages API's shape. */
function error(status: number, type: string, message: string): Reply {
  return { status, headers: {}, body: { type: "error", error: { type, message } } };
}
