import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { cacheRoot, hubParquetFiles, isHubDatasetId } from "../../src/datasets/hub.js";
import { readParquetRows } from "../../src/datasets/parquet.js";
import { UserError } from "../../src/errors.js";
import { type HubServer, parquetBuffer, startHubServer } from "../helpers/hub-server.js";
import { tempDir } from "../helpers/tmp.js";

const DATASET = "acme/bench";
const part = (start: number, count: number) =>
  parquetBuffer(
    Array.from({ length: count }, (_, i) => ({
      instance_id: `acme__bench-${start + i}`,
      problem_statement: "fix",
    })),
  );

let server: HubServer;
let cache: string;

beforeEach(async () => {
  cache = tempDir();
  server = await startHubServer({ datasets: { [DATASET]: { test: [part(0, 3), part(3, 2)] } } });
  vi.stubEnv("SWERUN_CACHE_DIR", cache);
  vi.stubEnv("HF_ENDPOINT", `${server.url}/`);
  vi.stubEnv("HF_TOKEN", "");
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await server.close();
});

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}

async function ids(files: string[]): Promise<string[]> {
  const rows = [];
  for (const file of files) rows.push(...(await readParquetRows(file)));
  return rows.map((row) => String(row.instance_id));
}

describe("hubParquetFiles", () => {
  it("downloads the listed files into the cache and reuses them without a request", async () => {
    const lines: string[] = [];
    const files = await hubParquetFiles(DATASET, "test", (line) => lines.push(line));
    expect(cacheRoot()).toBe(cache);
    expect(files).toEqual([
      join(cache, "datasets", "acme", "bench", "test", "0000.parquet"),
      expect.any(String),
    ]);
    expect(await ids(files)).toEqual([0, 1, 2, 3, 4].map((i) => `acme__bench-${i}`));
    expect(server.requests.map((r) => r.path)).toEqual([
      "/api/datasets/acme/bench/parquet/default/test",
      "/api/datasets/acme/bench/parquet/default/test/0.parquet",
      "/api/datasets/acme/bench/parquet/default/test/1.parquet",
    ]);
    expect(lines[0]).toContain(`Downloading ${DATASET} (test) from ${server.url} to`);

    server.requests.length = 0;
    lines.length = 0;
    expect(await hubParquetFiles(DATASET, "test", (line) => lines.push(line))).toEqual(files);
    expect(server.requests).toEqual([]);
    expect(lines).toEqual([expect.stringContaining(`Using cached ${DATASET} (test) from`)]);
  });

  it("uses the cache when the hub is unreachable, and says why it fails without one", async () => {
    const files = await hubParquetFiles(DATASET, "test");
    await server.close();
    expect(await hubParquetFiles(DATASET, "test")).toEqual(files);
    await expect(hubParquetFiles(DATASET, "dev")).rejects.toThrow(
      new RegExp(`^acme/bench: cannot reach ${server.url} \\(.*\\) and there is no cached copy$`),
    );
  });

  it("falls back to the refs/convert/parquet files when the listing answers 404", async () => {
    server.options.listing = false;
    const files = await hubParquetFiles(DATASET, "test");
    expect(files).toHaveLength(2);
    expect(await ids(files)).toHaveLength(5);
    const resolve = "/datasets/acme/bench/resolve/refs%2Fconvert%2Fparquet/default/test";
    expect(server.requests.map((r) => r.path)).toEqual([
      "/api/datasets/acme/bench/parquet/default/test",
      `${resolve}/0000.parquet`,
      `${resolve}/0001.parquet`,
      `${resolve}/0002.parquet`,
    ]);
  });

  it("names the dataset and split when neither the listing nor the files exist", async () => {
    await expect(hubParquetFiles(DATASET, "nosuch")).rejects.toThrow(
      `acme/bench: no split "nosuch" on ${server.url}`,
    );
    await expect(hubParquetFiles("acme/other", "test")).rejects.toThrow(UserError);
  });

  it("sends HF_TOKEN as a Bearer token and never puts it in an error", async () => {
    const token = "hf_secret_token_123456";
    server.options.token = token;
    await expect(hubParquetFiles(DATASET, "test")).rejects.toThrow(
      `acme/bench: ${server.url} refused access (HTTP 401); set HF_TOKEN if the dataset is gated`,
    );
    vi.stubEnv("HF_TOKEN", "hf_wrong_token_654321");
    const error = await failure(hubParquetFiles(DATASET, "test"));
    expect(error.message).toBe(
      `acme/bench: ${server.url} refused access (HTTP 401); check that HF_TOKEN can read this dataset`,
    );
    expect(error.message).not.toContain("hf_wrong");

    vi.stubEnv("HF_TOKEN", token);
    server.requests.length = 0;
    await hubParquetFiles(DATASET, "test");
    expect(server.requests.map((r) => r.authorization)).toEqual([
      `Bearer ${token}`,
      `Bearer ${token}`,
      `Bearer ${token}`,
    ]);
  });

  it("sends the token only to the hub's own origin", async () => {
    const token = "hf_secret_token_123456";
    const files = await startHubServer({ datasets: { [DATASET]: { test: [part(0, 1), part(1, 1)] } } });
    try {
      server.options.token = token;
      server.options.fileBase = files.url;
      vi.stubEnv("HF_TOKEN", token);
      expect(await ids(await hubParquetFiles(DATASET, "test"))).toEqual(["acme__bench-0", "acme__bench-1"]);
      expect(server.requests.map((r) => r.authorization)).toEqual([`Bearer ${token}`]);
      expect(files.requests.map((r) => r.authorization)).toEqual([undefined, undefined]);
    } finally {
      await files.close();
    }
  });

  it.each(["cut", "short"] as const)("leaves no cache behind after a %s download", async (truncate) => {
    server.options.truncate = truncate;
    const error = await failure(hubParquetFiles(DATASET, "test"));
    expect(error).toBeInstanceOf(UserError);
    expect(error.message).toMatch(
      /^acme\/bench: download of http:\/\/127\.0\.0\.1:\d+\/api\/\S+\/0\.parquet failed \(/,
    );
    const dir = join(cache, "datasets", "acme", "bench", "test");
    expect(readdirSync(dir)).toEqual([]);

    server.options.truncate = undefined;
    const files = await hubParquetFiles(DATASET, "test");
    expect(await ids(files)).toHaveLength(5);
    expect(existsSync(join(dir, "manifest.json"))).toBe(true);
  });

  it("rejects ids and splits that could escape the cache", async () => {
    expect(isHubDatasetId("princeton-nlp/SWE-bench_Lite")).toBe(true);
    for (const id of ["../x", "a/..", "a/b/c", "a", "a/b c"]) expect(isHubDatasetId(id)).toBe(false);
    await expect(hubParquetFiles(DATASET, "..")).rejects.toThrow('invalid split ".." for acme/bench');
  });
});
