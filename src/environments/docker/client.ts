import { type ChildProcess, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import os from "node:os";
import { join } from "node:path";
import { Duplex } from "node:stream";
import { inspect } from "node:util";
import Docker from "dockerode";
import type { DockerHostConfig } from "../../config/docker-hosts.js";
import type { DockerEnvironmentConfig } from "../../config/schema.js";
import { UserError } from "../../errors.js";

/** The Docker daemon is missing, unreachable or refused us; the message is one line saying how to fix it. */
export class DockerUnavailableError extends UserError {
  constructor(message: string) {
    super(message);
    this.name = "DockerUnavailableError";
  }
}

/** Where the daemon is, resolved the way the docker CLI does it. */
export interface DockerEndpoint {
  /** The address as a Docker user writes it (unix:///var/run/docker.sock, tcp://host:2376, ssh://user@host). */
  host: string;
  /** What set it: DOCKER_HOST, a context name, or the default. */
  source: string;
  kind: "unix" | "tcp" | "ssh";
  socketPath?: string;
  hostname?: string;
  port?: number;
  user?: string;
  tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer; verify: boolean };
}

const DEFAULT_SOCKET = "/var/run/docker.sock";

function dockerConfigDir(env: NodeJS.ProcessEnv): string {
  return env.DOCKER_CONFIG || join(os.homedir(), ".docker");
}

function readIfExists(path: string): Buffer | undefined {
  return existsSync(path) ? readFileSync(path) : undefined;
}

/** The endpoint of the current docker context (DOCKER_CONTEXT, else `currentContext` in config.json), if not "default". */
function contextEndpoint(
  env: NodeJS.ProcessEnv,
): { host: string; source: string; tlsDir: string; skipVerify: boolean } | undefined {
  const configDir = dockerConfigDir(env);
  let name = env.DOCKER_CONTEXT;
  if (!name) {
    try {
      const config = JSON.parse(readFileSync(join(configDir, "config.json"), "utf8")) as {
        currentContext?: unknown;
      };
      if (typeof config.currentContext === "string") name = config.currentContext;
    } catch {
      return undefined;
    }
  }
  if (!name || name === "default") return undefined;
  const digest = createHash("sha256").update(name).digest("hex");
  try {
    const meta = JSON.parse(
      readFileSync(join(configDir, "contexts", "meta", digest, "meta.json"), "utf8"),
    ) as {
      Endpoints?: { docker?: { Host?: unknown; SkipTLSVerify?: unknown } };
    };
    const host = meta.Endpoints?.docker?.Host;
    if (typeof host !== "string" || !host) return undefined;
    return {
      host,
      source: `docker context "${name}"`,
      tlsDir: join(configDir, "contexts", "tls", digest, "docker"),
      skipVerify: meta.Endpoints?.docker?.SkipTLSVerify === true,
    };
  } catch {
    throw new DockerUnavailableError(
      `Docker context "${name}" (from ${env.DOCKER_CONTEXT ? "DOCKER_CONTEXT" : join(configDir, "config.json")}) does not exist: run \`docker context ls\`, or set DOCKER_HOST`,
    );
  }
}

/** Where the daemon is said to be (DOCKER_HOST, else the current context) and whether to talk TLS to it. */
interface HostSetting {
  host: string;
  source: string;
  tlsDir: string;
  verify: boolean;
  useTls: boolean;
}

/** The daemon address the environment or the current docker context sets, if any. */
function hostSetting(env: NodeJS.ProcessEnv): HostSetting | undefined {
  const verify = Boolean(env.DOCKER_TLS_VERIFY);
  if (env.DOCKER_HOST) {
    const tlsDir = env.DOCKER_CERT_PATH || dockerConfigDir(env);
    return {
      host: env.DOCKER_HOST,
      source: "DOCKER_HOST",
      tlsDir,
      verify,
      useTls: verify || Boolean(env.DOCKER_TLS),
    };
  }
  const context = contextEndpoint(env);
  if (!context) return undefined;
  const { host, source, tlsDir } = context;
  // A context uses TLS when `docker context create` stored TLS material for it.
  const useTls = existsSync(join(tlsDir, "ca.pem")) || existsSync(join(tlsDir, "cert.pem"));
  return { host, source, tlsDir, verify: useTls && !context.skipVerify, useTls };
}

/** A TCP endpoint: TLS when asked for, or for https:// and port 2376, with the certificates in `tlsDir`. */
function tcpEndpoint(setting: HostSetting, url: URL): DockerEndpoint {
  const useTls = setting.useTls || url.protocol === "https:" || url.port === "2376";
  const port = url.port ? Number(url.port) : useTls ? 2376 : 2375;
  const endpoint: DockerEndpoint = {
    host: setting.host,
    source: setting.source,
    kind: "tcp",
    hostname: url.hostname,
    port,
  };
  if (useTls) {
    endpoint.tls = {
      ca: readIfExists(join(setting.tlsDir, "ca.pem")),
      cert: readIfExists(join(setting.tlsDir, "cert.pem")),
      key: readIfExists(join(setting.tlsDir, "key.pem")),
      verify: setting.verify,
    };
  }
  return endpoint;
}

/** Resolves the daemon address like the docker CLI: DOCKER_HOST, then the current context, then the default socket. */
export function resolveDockerEndpoint(env: NodeJS.ProcessEnv = process.env): DockerEndpoint {
  const setting = hostSetting(env);
  if (!setting?.host) {
    return {
      host: `unix://${DEFAULT_SOCKET}`,
      source: "the default",
      kind: "unix",
      socketPath: DEFAULT_SOCKET,
    };
  }
  const { host, source } = setting;
  if (host.startsWith("unix://")) {
    return { host, source, kind: "unix", socketPath: host.slice("unix://".length) || DEFAULT_SOCKET };
  }
  let url: URL;
  try {
    url = new URL(host.includes("://") ? host : `tcp://${host}`);
  } catch {
    throw new DockerUnavailableError(
      `${source} is "${host}", which is not a Docker address (unix:///path, tcp://host:port or ssh://user@host)`,
    );
  }
  if (url.protocol === "ssh:") {
    return {
      host,
      source,
      kind: "ssh",
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      user: url.username ? decodeURIComponent(url.username) : undefined,
    };
  }
  if (!["tcp:", "http:", "https:"].includes(url.protocol)) {
    throw new DockerUnavailableError(
      `${source} is "${host}": swerun supports unix://, tcp:// and ssh:// Docker addresses, not ${url.protocol}//`,
    );
  }
  return tcpEndpoint(setting, url);
}

/**
 * The endpoint of a host-pool entry, resolved as the docker CLI resolves DOCKER_HOST (port 2376 means TLS,
 * DOCKER_TLS_VERIFY and DOCKER_CERT_PATH apply), with the entry's own TLS keys winning. `source` says
 * where the host was named, for error messages.
 */
export function hostEndpoint(
  spec: DockerHostConfig,
  source = "environment.docker_hosts",
  env: NodeJS.ProcessEnv = process.env,
): DockerEndpoint {
  const hostEnv: NodeJS.ProcessEnv = { DOCKER_HOST: spec.host };
  for (const key of ["DOCKER_CONFIG", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY", "DOCKER_TLS"]) {
    if (env[key]) hostEnv[key] = env[key];
  }
  if (spec.cert_path) hostEnv.DOCKER_CERT_PATH = spec.cert_path;
  if (spec.tls_verify !== undefined) hostEnv.DOCKER_TLS_VERIFY = spec.tls_verify ? "1" : "";
  if (spec.tls !== undefined) hostEnv.DOCKER_TLS = spec.tls ? "1" : "";
  return { ...resolveDockerEndpoint(hostEnv), source };
}

/** The daemon a docker environment runs on: the first of `docker_hosts` when set, else DOCKER_HOST's. */
export function configEndpoint(config: Pick<DockerEnvironmentConfig, "docker_hosts">): DockerEndpoint {
  const first = config.docker_hosts?.[0];
  return first ? hostEndpoint(first) : resolveDockerEndpoint();
}

/**
 * An agent whose connections are `ssh [-l user] [-p port] host docker system dial-stdio`, as the docker CLI
 * does, so the user's ssh config, keys and known_hosts apply. Keep-alive reuses one ssh process.
 */
class SshDialAgent extends http.Agent {
  readonly #endpoint: DockerEndpoint;

  constructor(endpoint: DockerEndpoint) {
    super({ keepAlive: true });
    this.#endpoint = endpoint;
  }

  override createConnection(): Duplex {
    const { user, port, hostname } = this.#endpoint;
    const args = ["-o", "ConnectTimeout=30", "-T"];
    if (user) args.push("-l", user);
    if (port) args.push("-p", String(port));
    args.push("--", hostname ?? "", "docker", "system", "dial-stdio");
    const child: ChildProcess = spawn("ssh", args, { stdio: "pipe" });
    const socket = Duplex.from({ readable: child.stdout, writable: child.stdin }) as Duplex &
      Record<string, unknown>;
    let stderr = "";
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-2000);
    });
    child.once("error", (error) => socket.destroy(error));
    child.once("exit", (code) => {
      if (code)
        socket.destroy(new Error(`ssh exited with code ${code}: ${stderr.trim().split("\n").pop() ?? ""}`));
    });
    socket.once("close", () => child.kill());
    // http.Agent treats its connections as sockets.
    for (const method of ["setKeepAlive", "setNoDelay", "setTimeout", "ref", "unref"]) {
      socket[method] = () => socket;
    }
    return socket;
  }
}

/**
 * docker-modem formats every request's options with util.inspect (for its debug log, even when that is
 * off), agent included: walking a keep-alive agent's sockets cost milliseconds per request. The agent
 * shows as one word instead, which also keeps TLS keys out of that log when DEBUG=modem is set.
 */
function quiet<T extends http.Agent>(agent: T): T {
  Object.defineProperty(agent, inspect.custom, { value: () => "[swerun docker agent]" });
  return agent;
}

/** The connection agents of the clients made for each daemon address, so a hung daemon's can be cut. */
const agentsByHost = new Map<string, Set<http.Agent>>();

function registered<T extends http.Agent>(host: string, agent: T): T {
  const agents = agentsByHost.get(host) ?? new Set<http.Agent>();
  agentsByHost.set(host, agents);
  agents.add(agent);
  return agent;
}

/**
 * Cuts every connection of the clients made so far for the daemon at `host` (a host that stopped answering:
 * a frozen daemon never answers the requests waiting on it): their waiting requests fail at once with
 * ECONNRESET, and any later request of those clients fails the same way, so what used them ends (and the
 * batch runs its instance again elsewhere). Clients made afterwards connect as usual.
 */
export function cutConnections(host: string): void {
  for (const agent of agentsByHost.get(host) ?? []) {
    (agent as unknown as { createConnection: () => Duplex }).createConnection = () => {
      const socket = new Duplex({
        read() {},
        write(_chunk, _encoding, done) {
          done();
        },
      });
      process.nextTick(() =>
        socket.destroy(
          Object.assign(new Error(`Docker host ${host} stopped answering`), { code: "ECONNRESET" }),
        ),
      );
      return socket;
    };
    agent.destroy();
  }
  agentsByHost.delete(host);
}

/** A dockerode client for the endpoint, on a keep-alive agent (one connection reused for every request). */
export function createDockerClient(endpoint: DockerEndpoint = resolveDockerEndpoint()): Docker {
  const docker = newDockerClient(endpoint);
  const agent = (docker.modem as { agent?: http.Agent }).agent;
  if (agent) registered(endpoint.host, agent);
  return docker;
}

function newDockerClient(endpoint: DockerEndpoint): Docker {
  if (endpoint.kind === "unix") {
    const agent = quiet(new http.Agent({ keepAlive: true }));
    return new Docker({ socketPath: endpoint.socketPath, agent } as Docker.DockerOptions);
  }
  if (endpoint.kind === "ssh") {
    const agent = quiet(new SshDialAgent(endpoint));
    return new Docker({ host: "docker", port: 80, protocol: "http", agent } as Docker.DockerOptions);
  }
  const tls = endpoint.tls;
  const agent = quiet(
    tls
      ? new https.Agent({
          keepAlive: true,
          ca: tls.ca,
          cert: tls.cert,
          key: tls.key,
          rejectUnauthorized: tls.verify,
        })
      : new http.Agent({ keepAlive: true }),
  );
  return new Docker({
    host: endpoint.hostname,
    port: endpoint.port,
    protocol: tls ? "https" : "http",
    ca: tls?.ca,
    cert: tls?.cert,
    key: tls?.key,
    agent,
  } as Docker.DockerOptions);
}

/** Frees the client's idle keep-alive connections (and ssh processes). */
export function closeDockerClient(docker: Docker): void {
  const agent = (docker.modem as { agent?: http.Agent }).agent;
  agent?.destroy();
  if (agent) for (const agents of agentsByHost.values()) agents.delete(agent);
}

const CONNECTION_ERRORS = new Set([
  "ENOENT",
  "ECONNREFUSED",
  "EACCES",
  "EPERM",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ECONNRESET",
  "EPIPE",
]);

/** True when an error means the daemon could not be reached at all (not that it refused a request). */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && CONNECTION_ERRORS.has(code)) return true;
  const message = error instanceof Error ? error.message : "";
  return /^ssh exited|socket hang up|timed out connecting/.test(message);
}

/** One line: where we looked, why it failed, and what to do about it. */
export function unreachableMessage(endpoint: DockerEndpoint, error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const reason = error instanceof Error ? error.message.trim().split("\n")[0] : String(error);
  const where = `${endpoint.host} (from ${endpoint.source})`;
  let fix: string;
  if (code === "EACCES" || code === "EPERM") {
    fix =
      "permission denied on the socket: add your user to the docker group (sudo usermod -aG docker $USER, then log in again) or run as root";
  } else if (endpoint.kind === "unix") {
    fix =
      "is Docker running? Start it (sudo systemctl start docker, or dockerd, or Docker Desktop), or set DOCKER_HOST to a running daemon";
  } else if (endpoint.kind === "ssh") {
    fix = `check that \`ssh ${endpoint.user ? `${endpoint.user}@` : ""}${endpoint.hostname} docker version\` works, or fix DOCKER_HOST`;
  } else {
    fix =
      "is the daemon listening there? Check DOCKER_HOST (and DOCKER_TLS_VERIFY / DOCKER_CERT_PATH for TLS)";
  }
  return `Cannot connect to the Docker daemon at ${where}: ${reason}; ${fix}`;
}

/** A client that has answered a ping, or a DockerUnavailableError saying how to reach the daemon. */
export async function connectDocker(
  endpoint: DockerEndpoint = resolveDockerEndpoint(),
  timeoutMs = endpoint.kind === "ssh" ? 30_000 : 10_000,
): Promise<Docker> {
  const docker = createDockerClient(endpoint);
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  try {
    await (docker.ping as (options: object) => Promise<unknown>).call(docker, { abortSignal: abort.signal });
    return docker;
  } catch (error) {
    closeDockerClient(docker);
    const cause = abort.signal.aborted ? new Error(`timed out connecting after ${timeoutMs / 1000}s`) : error;
    throw new DockerUnavailableError(unreachableMessage(endpoint, cause));
  } finally {
    clearTimeout(timer);
  }
}
