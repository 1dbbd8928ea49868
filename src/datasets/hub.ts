import { randomUUID } from "node:crypto";
import {
  closeSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream } from "node:stream/web";
import { UserError } from "../errors.js";
import { writeFileAtomic } from "../util/atomic-write.js";
import { cacheRoot } from "../util/cache-root.js";
import { registerSecret } from "../util/secrets.js";

const DEFAULT_ENDPOINT = "https://huggingface.co";
const SEGMENT = /^(?!\.{1,2}$)[\w.-]+$/;

/** True for a Hugging Face dataset id, `owner/name`. */
export function isHubDatasetId(value: string): boolean {
  const parts = value.split("/");
  return parts.length === 2 && parts.every((part) => SEGMENT.test(part));
}

/** Downloads are kept in swerun's cache folder (`SWERUN_CACHE_DIR`, else `~/.cache/swerun` on Linux). */
export { cacheRoot };

/** The hub's base URL: `HF_ENDPOINT`, else https://huggingface.co. */
export function hubEndpoint(): string {
  return (process.env.HF_ENDPOINT || DEFAULT_ENDPOINT).replace(/\/+$/, "");
}

interface Manifest {
  dataset: string;
  split: string;
  endpoint: string;
  files: string[];
  downloaded_at: string;
}

/**
 * The local parquet files of a hub dataset split. A split downloaded before is used as is, without a request
 * (so it works offline); else the files are listed by the hub's parquet API (or, when that answers 404, read
 * from the `refs/convert/parquet` branch until a 404) and each is downloaded to a temp file and renamed into
 * the cache. The manifest is written last, so an interrupted download is never taken for a complete one.
 */
export async function hubParquetFiles(
  dataset: string,
  split: string,
  onProgress: (line: string) => void = () => {},
): Promise<string[]> {
  if (!isHubDatasetId(dataset))
    throw new UserError(`"${dataset}" is not a Hugging Face dataset id (owner/name)`);
  if (!SEGMENT.test(split)) throw new UserError(`invalid split "${split}" for ${dataset}`);
  const dir = join(cacheRoot(), "datasets", ...dataset.split("/"), split);
  const manifestPath = join(dir, "manifest.json");
  const cached = readManifest(manifestPath, dir);
  if (cached) {
    onProgress(`Using cached ${dataset} (${split}) from ${dir} (delete it to download again)`);
    return cached;
  }
  const hub = new HubClient(hubEndpoint(), process.env.HF_TOKEN || undefined, dataset);
  onProgress(`Downloading ${dataset} (${split}) from ${hub.endpoint} to ${dir}`);
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  const save = async (url: string, mayBeMissing: boolean) => {
    const name = `${String(files.length).padStart(4, "0")}.parquet`;
    const size = await hub.download(url, join(dir, name), mayBeMissing);
    if (size === undefined) return false;
    files.push(name);
    onProgress(`Downloaded ${dataset} (${split}) ${name} (${(size / 1e6).toFixed(1)} MB)`);
    return true;
  };
  const base = `${hub.endpoint}/api/datasets/${dataset}/parquet/default/${encodeURIComponent(split)}`;
  const listed = await hub.list(base);
  if (listed) {
    for (const url of listed) await save(url, false);
  } else {
    const branch = `${hub.endpoint}/datasets/${dataset}/resolve/refs%2Fconvert%2Fparquet/default`;
    const resolveUrl = () =>
      `${branch}/${encodeURIComponent(split)}/${String(files.length).padStart(4, "0")}.parquet`;
    let more = await save(resolveUrl(), true);
    if (!more) throw new UserError(`${dataset}: no split "${split}" on ${hub.endpoint}`);
    while (more) more = await save(resolveUrl(), true);
  }
  const manifest: Manifest = {
    dataset,
    split,
    endpoint: hub.endpoint,
    files,
    downloaded_at: new Date().toISOString(),
  };
  writeFileAtomic(manifestPath, [`${JSON.stringify(manifest, null, 2)}\n`]);
  return files.map((name) => join(dir, name));
}

function readManifest(path: string, dir: string): string[] | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const manifest = JSON.parse(readFileSync(path, "utf8")) as Partial<Manifest>;
    const files = manifest.files;
    if (!Array.isArray(files) || files.length === 0 || !files.every((f) => typeof f === "string"))
      return undefined;
    const paths = files.map((name) => join(dir, name));
    return paths.every((file) => existsSync(file)) ? paths : undefined;
  } catch {
    return undefined;
  }
}

/** HTTP to the hub, with the token sent only to the hub's own origin and never put in a message. */
class HubClient {
  constructor(
    readonly endpoint: string,
    private readonly token: string | undefined,
    private readonly dataset: string,
  ) {
    registerSecret(token);
  }

  /** The parquet URLs of the listing endpoint, or undefined when it answers 404. */
  async list(url: string): Promise<string[] | undefined> {
    const response = await this.get(url);
    if (response.status === 404) {
      await response.body?.cancel();
      return undefined;
    }
    this.check(response, url);
    const body: unknown = await response.json().catch(() => undefined);
    if (!Array.isArray(body) || body.length === 0 || !body.every((item) => typeof item === "string")) {
      throw new UserError(`${this.dataset}: ${url} did not answer with a list of parquet file URLs`);
    }
    return body.map((item) => new URL(item, url).href);
  }

  /** Downloads `url` to `target` atomically; returns its size, or undefined on a 404 when `mayBeMissing`. */
  async download(url: string, target: string, mayBeMissing: boolean): Promise<number | undefined> {
    const response = await this.get(url);
    if (response.status === 404 && mayBeMissing) {
      await response.body?.cancel();
      return undefined;
    }
    this.check(response, url);
    const temp = `${target}.${process.pid}.${randomUUID()}.tmp`;
    const file = createWriteStream(temp);
    try {
      if (!response.body) throw new Error("empty response");
      await pipeline(Readable.fromWeb(response.body as ReadableStream<Uint8Array>), file);
      if (!hasParquetMagic(temp)) throw new Error("the response is not a complete parquet file");
      renameSync(temp, target);
      return statSync(target).size;
    } catch (error) {
      // The file is opened in the background: removed only once closed, or an open still under way (a
      // download cut at once) would create it after the removal.
      file.destroy();
      if (!file.closed) await new Promise<void>((resolve) => file.once("close", () => resolve()));
      rmSync(temp, { force: true });
      throw new UserError(`${this.dataset}: download of ${url} failed (${describe(error)})`);
    }
  }

  private async get(url: string): Promise<Response> {
    const sameOrigin = new URL(url).origin === new URL(this.endpoint).origin;
    const headers: Record<string, string> =
      this.token && sameOrigin ? { Authorization: `Bearer ${this.token}` } : {};
    try {
      return await fetch(url, { headers });
    } catch (error) {
      throw new UserError(
        `${this.dataset}: cannot reach ${this.endpoint} (${describe(error)}) and there is no cached copy`,
      );
    }
  }

  private check(response: Response, url: string): void {
    if (response.ok) return;
    void response.body?.cancel();
    if (response.status === 401 || response.status === 403) {
      const hint = this.token
        ? "check that HF_TOKEN can read this dataset"
        : "set HF_TOKEN if the dataset is gated";
      throw new UserError(
        `${this.dataset}: ${this.endpoint} refused access (HTTP ${response.status}); ${hint}`,
      );
    }
    throw new UserError(`${this.dataset}: GET ${url} failed with HTTP ${response.status}`);
  }
}

/** An error's message with its cause's ("fetch failed: connect ECONNREFUSED 127.0.0.1:1"). */
function describe(error: unknown): string {
  const { message, cause } = error as Error & { cause?: unknown };
  return cause instanceof Error ? `${message}: ${cause.message}` : message;
}

/** A parquet file starts and ends with "PAR1"; a truncated download does not. */
function hasParquetMagic(path: string): boolean {
  const size = statSync(path).size;
  if (size < 8) return false;
  const head = Buffer.alloc(4);
  const tail = Buffer.alloc(4);
  const fd = openSync(path, "r");
  try {
    readSync(fd, head, 0, 4, 0);
    readSync(fd, tail, 0, 4, size - 4);
  } finally {
    closeSync(fd);
  }
  return head.toString("latin1") === "PAR1" && tail.toString("latin1") === "PAR1";
}
