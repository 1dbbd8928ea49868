import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

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

/** What the server sends back: a status, headers beside the JSON content type, and a body sent as JSON. */
export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** A request as it arrived, its body still raw (signatures are computed over the bytes sent). */
export interface Incoming {
  method: string;
  /** The path and query as sent. */
  url: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  raw: Buffer;
}

/**
 * What the local stand-ins for model APIs share: an HTTP server on a free port of 127.0.0.1 that reads each
 * request whole and answers it with JSON, a queue of scripted answers, and the requests received. A subclass
 * says how its API answers (`reply`): which paths and keys it takes, what it refuses and in which error shape;
 * `receive` parses and records a request's JSON body, `next` gives the next scripted answer.
 */
export abstract class ScriptedServer {
  readonly requests: CapturedRequest[] = [];
  readonly #queue: ScriptedAnswer[] = [];
  readonly #server: Server;
  /** The URL to configure: the server's root, followed by the folder given to `listen`. */
  url = "";

  /** `headers` go on every reply (under the reply's own). */
  protected constructor(headers: Record<string, string> = {}) {
    this.#server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const url = request.url ?? "";
        const [path = "", search = ""] = url.split("?");
        const reply = this.reply({
          method: request.method ?? "",
          url,
          path,
          query: Object.fromEntries(new URLSearchParams(search)),
          headers: request.headers,
          raw: Buffer.concat(chunks),
        });
        response.writeHead(reply.status, {
          "content-type": "application/json",
          ...headers,
          ...reply.headers,
        });
        response.end(JSON.stringify(reply.body));
      });
    });
  }

  /** How the API answers this request. */
  protected abstract reply(request: Incoming): Reply;

  /** Starts listening; `url` becomes the server's root followed by `folder`. */
  protected async listen(folder = ""): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}${folder}`;
    return this;
  }

  push(...answers: ScriptedAnswer[]): this {
    this.#queue.push(...answers);
    return this;
  }

  /** Scripted answers not yet given. */
  get pending(): number {
    return this.#queue.length;
  }

  /** The request's body parsed as JSON and recorded in `requests`, or undefined (not recorded) when it is not JSON. */
  protected receive(request: Incoming): { body: unknown } | undefined {
    let body: unknown;
    try {
      body = JSON.parse(request.raw.toString("utf8"));
    } catch {
      return undefined;
    }
    const { method, path, query, headers } = request;
    this.requests.push({ method, path, query, headers, body });
    return { body };
  }

  /** The next scripted answer to a request with this body, or undefined when none is left. */
  protected next(body: unknown): Reply | undefined {
    const answer = this.#queue.shift();
    if (!answer) return undefined;
    const answerBody = typeof answer.body === "function" ? answer.body(body) : answer.body;
    return { status: answer.status ?? 200, headers: answer.headers ?? {}, body: answerBody ?? {} };
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
