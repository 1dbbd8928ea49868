import WebSocket from "ws";
import { apiMessage, type KubeClient, KubernetesUnavailableError } from "./client.js";

/**
 * One pods/exec through the API server, over its WebSocket channel protocol (v5, else v4): byte 0 of each
 * message is the channel (0 stdin, 1 stdout, 2 stderr, 3 the final Status, 255 close of a channel, v5 only).
 * The exit code arrives only on channel 3, inside a metav1.Status.
 */

/** The metav1.Status an exec ends with (channel 3). */
export interface ExecStatus {
  status?: string;
  message?: string;
  reason?: string;
  details?: { causes?: Array<{ reason?: string; message?: string }> };
}

/** The command's exit code from the exec's Status: 0 on Success, the ExitCode cause on NonZeroExitCode. */
export function exitCodeOf(status: ExecStatus | undefined): number | undefined {
  if (!status) return undefined;
  if (status.status === "Success") return 0;
  if (status.reason !== "NonZeroExitCode") return undefined;
  const cause = status.details?.causes?.find((entry) => entry.reason === "ExitCode");
  const code = Number(cause?.message);
  return Number.isInteger(code) ? code : undefined;
}

/** How an exec's connection ended: its Status when the server sent one, else why the socket closed. */
export interface ExecEnd {
  status?: ExecStatus;
  /** Why the connection ended without a Status: closed, a ping unanswered, a deadline. */
  reason: string;
}

export interface ExecOptions {
  /** The container in the pod (default: the pod's only one). */
  container?: string;
  /** Open stdin (the session writes its requests there). */
  stdin?: boolean;
  /** Seconds the WebSocket handshake may take (default 30). */
  connectTimeoutSeconds?: number;
  /** A WebSocket ping this often (ms); a ping unanswered by the next one ends the connection. 0: none. */
  keepaliveMs?: number;
}

/** The channel protocols swerun speaks, best first: v5 can close stdin alone. */
const PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io"];

/** Opens the exec's WebSocket with the kubeconfig's credentials; resolves once it is open. */
async function connect(
  client: KubeClient,
  path: string,
  onMessage: (data: Buffer) => void,
): Promise<WebSocket> {
  const options: WebSocket.ClientOptions = {};
  await client.config.applyToHTTPSOptions(options);
  const url = `${client.server.replace(/^http/, "ws")}${path}`;
  const socket = new WebSocket(url, PROTOCOLS, options);
  socket.on("message", (data: Buffer, isBinary: boolean) => {
    if (isBinary) onMessage(data);
  });
  return new Promise((resolve, reject) => {
    socket.once("open", () => resolve(socket));
    socket.once("unexpected-response", (_request, response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => {
        body += chunk.toString("utf8");
      });
      response.on("end", () => {
        const status = response.statusCode ?? 0;
        reject(Object.assign(new Error(`HTTP ${status}`), { code: status, body }));
        socket.terminate();
      });
    });
    socket.once("error", reject);
  });
}

/**
 * One exec's connection: what it prints (`onData`), writes to its stdin, and how it ended (`ended`).
 * `ended` always resolves: with the Status, or with the reason the socket closed first.
 */
export class ExecChannel {
  readonly protocol: string;
  readonly ended: Promise<ExecEnd>;
  #socket: WebSocket;
  #status: ExecStatus | undefined;
  #endReason = "";
  #resolveEnd: (end: ExecEnd) => void = () => {};
  #onData: (channel: number, data: Buffer) => void = () => {};
  #keepalive: NodeJS.Timeout | undefined;
  #ponged = true;

  private constructor(socket: WebSocket, keepaliveMs: number) {
    this.#socket = socket;
    this.protocol = socket.protocol;
    this.ended = new Promise((resolve) => {
      this.#resolveEnd = resolve;
    });
    socket.on("close", (code, reason) => {
      clearInterval(this.#keepalive);
      this.#resolveEnd({
        ...(this.#status ? { status: this.#status } : {}),
        reason:
          this.#endReason ||
          `the exec's connection closed (WebSocket code ${code}${reason.length ? `: ${reason.toString()}` : ""})`,
      });
    });
    socket.on("error", (error) => {
      this.#endReason ||= `the exec's connection failed: ${error.message}`;
    });
    if (keepaliveMs > 0) {
      socket.on("pong", () => {
        this.#ponged = true;
      });
      this.#keepalive = setInterval(() => {
        if (!this.#ponged) {
          this.terminate(`the exec's connection answered no ping in ${keepaliveMs / 1000} s`);
          return;
        }
        this.#ponged = false;
        socket.ping();
      }, keepaliveMs);
      this.#keepalive.unref();
    }
  }

  /** Opens an exec of `command` in `pod`; rejects with a KubernetesUnavailableError when it cannot. */
  static async open(
    client: KubeClient,
    pod: string,
    command: string[],
    options: ExecOptions = {},
  ): Promise<ExecChannel> {
    const query = new URLSearchParams({
      stdout: "true",
      stderr: "true",
      stdin: String(Boolean(options.stdin)),
      tty: "false",
    });
    if (options.container) query.set("container", options.container);
    for (const word of command) query.append("command", word);
    const path = `/api/v1/namespaces/${encodeURIComponent(client.namespace)}/pods/${encodeURIComponent(pod)}/exec?${query}`;
    let channel: ExecChannel | undefined;
    const early: Buffer[] = [];
    const connecting = connect(client, path, (data) => {
      if (channel) channel.#receive(data);
      else early.push(data);
    });
    let timer: NodeJS.Timeout | undefined;
    const seconds = options.connectTimeoutSeconds ?? 30;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new KubernetesUnavailableError(`exec in pod ${pod}: no connection after ${seconds} s`)),
        seconds * 1000,
      );
    });
    let socket: WebSocket;
    try {
      socket = await Promise.race([connecting, timeout]);
    } catch (error) {
      // A handshake that ends after the deadline is closed at once.
      void connecting.then((late) => late.terminate()).catch(() => {});
      if (error instanceof KubernetesUnavailableError) throw error;
      throw new KubernetesUnavailableError(`exec in pod ${pod} failed: ${apiMessage(error)}`);
    } finally {
      clearTimeout(timer);
    }
    channel = new ExecChannel(socket, options.keepaliveMs ?? 0);
    for (const data of early) channel.#receive(data);
    return channel;
  }

  /** Where stdout (1) and stderr (2) go, as they arrive. */
  onData(listener: (channel: number, data: Buffer) => void): void {
    this.#onData = listener;
  }

  #receive(message: Buffer): void {
    const stream = message[0];
    const data = message.subarray(1);
    if (stream === 1 || stream === 2) {
      this.#onData(stream, data);
    } else if (stream === 3) {
      try {
        this.#status = JSON.parse(data.toString("utf8")) as ExecStatus;
      } catch {
        this.#status = { status: "Failure", message: data.toString("utf8") };
      }
    }
  }

  /** Whether the connection is open (writes reach the command). */
  get open(): boolean {
    return this.#socket.readyState === this.#socket.OPEN;
  }

  /** Writes to the command's stdin; false when the connection is no longer open. */
  write(data: string | Buffer): boolean {
    if (!this.open) return false;
    const payload = typeof data === "string" ? Buffer.from(data) : data;
    this.#socket.send(Buffer.concat([Buffer.from([0]), payload]));
    return true;
  }

  /** Ends the command's stdin: a CLOSE of channel 0 under v5; v4 can only close the whole connection. */
  closeStdin(): void {
    if (this.protocol === "v5.channel.k8s.io") {
      if (this.open) this.#socket.send(Buffer.from([255, 0]));
    } else {
      this.close();
    }
  }

  /** Closes the connection (the kubelet's runtime then kills the exec's process). Safe to call twice. */
  close(): void {
    clearInterval(this.#keepalive);
    if (this.#socket.readyState === this.#socket.CONNECTING || this.open) this.#socket.close();
  }

  /** Drops the connection at once, `reason` being why (`ended` says it). */
  terminate(reason: string): void {
    this.#endReason ||= reason;
    clearInterval(this.#keepalive);
    this.#socket.terminate();
  }
}
