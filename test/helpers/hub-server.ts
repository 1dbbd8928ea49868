import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type ColumnSource, parquetWriteBuffer } from "hyparquet-writer";

type WriteOptions = Omit<Parameters<typeof parquetWriteBuffer>[0], "columnData">;

/** A parquet file holding `rows` (all rows must have the same keys), written by hyparquet-writer. */
export function parquetBuffer(rows: Array<Record<string, unknown>>, options: WriteOptions = {}): Buffer {
  const names = Object.keys(rows[0] ?? {});
  const columnData = names.map((name): ColumnSource => {
    const data = rows.map((row) => row[name]) as ColumnSource["data"];
    return typeof data[0] === "bigint" ? { name, data, type: "INT64" } : { name, data };
  });
  return Buffer.from(parquetWriteBuffer({ columnData, ...options }));
}

/** What the fake hub serves; the server reads it on every request, so a test may change it midway. */
export interface HubServerOptions {
  /** dataset id (`owner/name`) -> split -> parquet files. */
  datasets: Record<string, Record<string, Buffer[]>>;
  /** When set, every request without `Authorization: Bearer <token>` gets a 401. */
  token?: string;
  /** False: the listing endpoint answers 404, as for a dataset without a parquet listing. */
  listing?: boolean;
  /** Base URL of the files the listing names (default: this server), to list files on another host. */
  fileBase?: string;
  /** "cut": send half of each parquet file and drop the connection; "short": send half and end cleanly. */
  truncate?: "cut" | "short";
}

export interface HubRequest {
  path: string;
  authorization: string | undefined;
}

export interface HubServer {
  url: string;
  options: HubServerOptions;
  requests: HubRequest[];
  /** Stops the server (again is a no-op). */
  close(): Promise<void>;
}

const LISTING = /^\/api\/datasets\/([^/]+\/[^/]+)\/parquet\/default\/([^/]+)$/;
const API_FILE = /^\/api\/datasets\/([^/]+\/[^/]+)\/parquet\/default\/([^/]+)\/(\d+)\.parquet$/;
const RESOLVE_FILE =
  /^\/datasets\/([^/]+\/[^/]+)\/resolve\/refs%2Fconvert%2Fparquet\/default\/([^/]+)\/(\d{4})\.parquet$/;

/**
 * A Hugging Face hub stand-in on 127.0.0.1 (random port): the parquet listing endpoint
 * `/api/datasets/{id}/parquet/default/{split}` (a JSON array of URLs), the files it lists, and the
 * `refs/convert/parquet` resolve URLs. Unknown paths get a 404. Every request is recorded.
 */
export async function startHubServer(options: HubServerOptions): Promise<HubServer> {
  const requests: HubRequest[] = [];
  const server = createServer((request, response) => {
    const path = request.url ?? "/";
    requests.push({ path, authorization: request.headers.authorization });
    respond(options, url, request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    options,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (!server.listening) return resolve();
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

function respond(
  options: HubServerOptions,
  url: string,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  const path = request.url ?? "/";
  if (options.token !== undefined && request.headers.authorization !== `Bearer ${options.token}`) {
    response.writeHead(401, { "content-type": "application/json" }).end('{"error":"Invalid credentials"}');
    return;
  }
  const listing = LISTING.exec(path);
  if (listing && options.listing !== false) {
    const [, dataset = "", split = ""] = listing;
    const files = options.datasets[dataset]?.[split];
    if (files) {
      const base = options.fileBase ?? url;
      const urls = files.map(
        (_, i) => `${base}/api/datasets/${dataset}/parquet/default/${split}/${i}.parquet`,
      );
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(urls));
      return;
    }
  }
  const file = API_FILE.exec(path) ?? RESOLVE_FILE.exec(path);
  const content = file ? options.datasets[file[1] ?? ""]?.[file[2] ?? ""]?.[Number(file[3])] : undefined;
  if (!content) {
    response.writeHead(404, { "content-type": "application/json" }).end('{"error":"Not found"}');
    return;
  }
  if (!options.truncate) {
    response.writeHead(200, { "content-length": content.length }).end(content);
    return;
  }
  const half = content.subarray(0, Math.floor(content.length / 2));
  if (options.truncate === "short") {
    response.writeHead(200, { "content-length": half.length }).end(half);
    return;
  }
  response.writeHead(200, { "content-length": content.length });
  response.write(half, () => response.socket?.destroy());
}
