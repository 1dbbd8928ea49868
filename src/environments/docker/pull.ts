import { readFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import type Docker from "dockerode";
import { UserError } from "../../errors.js";

/** The image is missing and could not be pulled; the message names the image. */
export class DockerImageError extends UserError {
  constructor(message: string) {
    super(message);
    this.name = "DockerImageError";
  }
}

/** The daemon's own message from a dockerode error (`json.message`), else the error's message. */
export function daemonMessage(error: unknown): string {
  const json = (error as { json?: unknown } | null)?.json;
  if (json && typeof json === "object" && typeof (json as { message?: unknown }).message === "string") {
    return (json as { message: string }).message.trim();
  }
  if (typeof json === "string" && json.trim()) return json.trim();
  return error instanceof Error ? error.message.trim() : String(error);
}

/** The registry an image reference points at, as Docker keys it in config.json `auths`. */
export function registryOf(image: string): string {
  const first = image.split("/")[0] ?? "";
  const hasRegistry =
    image.includes("/") && (first.includes(".") || first.includes(":") || first === "localhost");
  return hasRegistry && first !== "docker.io" ? first : "https://index.docker.io/v1/";
}

/** Credentials from `auths` in ~/.docker/config.json (what `docker login` writes without a credential helper). */
export function registryAuth(
  image: string,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> | undefined {
  const registry = registryOf(image);
  try {
    const path = join(env.DOCKER_CONFIG || join(os.homedir(), ".docker"), "config.json");
    const auths = (
      JSON.parse(readFileSync(path, "utf8")) as { auths?: Record<string, Record<string, unknown>> }
    ).auths;
    const entry = auths?.[registry] ?? auths?.[`https://${registry}`];
    if (typeof entry?.identitytoken === "string")
      return { identitytoken: entry.identitytoken, serveraddress: registry };
    if (typeof entry?.auth !== "string") return undefined;
    const decoded = Buffer.from(entry.auth, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    if (colon < 0) return undefined;
    return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1), serveraddress: registry };
  } catch {
    return undefined;
  }
}

interface LayerState {
  status: string;
  current: number;
  total: number;
}

const MB = 1e6;

/** "3/7 layers done, 45.2/120.0 MB downloaded" from the pull's per-layer events. */
function summarize(layers: Map<string, LayerState>): string {
  let done = 0;
  let current = 0;
  let total = 0;
  for (const layer of layers.values()) {
    if (/complete|already exists/i.test(layer.status)) done++;
    current += layer.current;
    total += layer.total;
  }
  const bytes = total > 0 ? `, ${(current / MB).toFixed(1)}/${(total / MB).toFixed(1)} MB downloaded` : "";
  return `${done}/${layers.size} layers done${bytes}`;
}

export interface PullOptions {
  timeoutSeconds: number;
  platform?: string;
  onProgress?: (line: string) => void;
}

interface PullEvent {
  id?: string;
  status?: string;
  error?: string;
  progressDetail?: { current?: number; total?: number };
}

/** Records one line of the pull's JSON stream in `layers`; returns the daemon's error, if the line is one. */
function readPullLine(line: string, layers: Map<string, LayerState>): string | undefined {
  let event: PullEvent;
  try {
    event = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!event.id || !event.status || /^(Pulling from|Digest:|Status:)/.test(event.status)) return event.error;
  const layer = layers.get(event.id) ?? { status: "", current: 0, total: 0 };
  layer.status = event.status;
  if (event.status === "Downloading") {
    layer.current = event.progressDetail?.current ?? layer.current;
    layer.total = event.progressDetail?.total ?? layer.total;
  } else if (/download complete|pull complete/i.test(event.status)) {
    layer.current = layer.total;
  }
  layers.set(event.id, layer);
  return event.error;
}

/**
 * Reads a pull's stream to its end, reporting layers and bytes about once a second; returns the layers and
 * the daemon's error ("" when none).
 */
async function followPull(
  stream: Readable,
  image: string,
  report: (line: string) => void,
): Promise<{ layers: Map<string, LayerState>; failure: string }> {
  const layers = new Map<string, LayerState>();
  let lastReport = 0;
  let buffered = "";
  let failure = "";
  await new Promise<void>((resolve, reject) => {
    stream.on("data", (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      const lines = buffered.split("\n");
      buffered = lines.pop() ?? "";
      for (const line of lines) if (line.trim()) failure = readPullLine(line, layers) ?? failure;
      if (Date.now() - lastReport >= 1000 && layers.size > 0) {
        lastReport = Date.now();
        report(`Pulling ${image}: ${summarize(layers)}`);
      }
    });
    stream.once("end", resolve);
    stream.once("close", resolve);
    stream.once("error", reject);
  });
  return { layers, failure };
}

/** Asks the daemon to pull, with the registry's credentials when ~/.docker/config.json has them. */
function startPull(docker: Docker, image: string, query: Record<string, unknown>): Promise<Readable> {
  const pullWithAuth = docker.pull as unknown as (
    this: Docker,
    image: string,
    query: object,
    callback: undefined,
    auth?: object,
  ) => Promise<Readable>;
  return pullWithAuth.call(docker, image, query, undefined, registryAuth(image));
}

/** Pulls the image, reporting layers and bytes about once a second, within the timeout. */
async function pull(docker: Docker, image: string, options: PullOptions): Promise<void> {
  const report = options.onProgress ?? (() => {});
  const abort = new AbortController();
  const query: Record<string, unknown> = { abortSignal: abort.signal };
  if (options.platform) query.platform = options.platform;
  let timedOut = false;
  let stream: Readable | undefined;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort();
    stream?.destroy();
  }, options.timeoutSeconds * 1000);
  const started = Date.now();
  report(`Pulling Docker image ${image} (not present on the daemon)...`);
  try {
    stream = await startPull(docker, image, query);
    const { layers, failure } = await followPull(stream, image, report);
    if (timedOut) throw new Error("timed out");
    if (failure) throw new Error(failure);
    report(`Pulled ${image} in ${((Date.now() - started) / 1000).toFixed(1)} s (${summarize(layers)})`);
  } catch (error) {
    if (timedOut) {
      throw new DockerImageError(
        `Pulling Docker image "${image}" took longer than environment.pull_timeout (${options.timeoutSeconds} s); pull it first (docker pull ${image}) or raise pull_timeout`,
      );
    }
    throw new DockerImageError(
      `Docker image "${image}" is not on the daemon and could not be pulled: ${daemonMessage(error)}`,
    );
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Makes sure the daemon has the image: uses it when present, pulls it (with progress) when missing.
 * Returns true when it pulled it.
 */
export async function ensureImage(docker: Docker, image: string, options: PullOptions): Promise<boolean> {
  try {
    await docker.getImage(image).inspect();
    return false;
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode !== 404) throw error;
  }
  await pull(docker, image, options);
  try {
    await docker.getImage(image).inspect();
  } catch (error) {
    throw new DockerImageError(
      `Docker image "${image}" is still missing after the pull: ${daemonMessage(error)}`,
    );
  }
  return true;
}

/** Whether a daemon's error (or a pull's) says its disk is full. */
export function isNoSpace(error: unknown): boolean {
  return /no space left on device/i.test(daemonMessage(error));
}
