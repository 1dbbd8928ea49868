import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { loadInstances, readDatasetFile } from "../../src/datasets/dataset.js";
import { type HubServer, parquetBuffer, startHubServer } from "../helpers/hub-server.js";
import { tempDir } from "../helpers/tmp.js";

const record = (instance_id: string) => ({
  instance_id,
  problem_statement: `Fix ${instance_id}`,
  repo: "o/r",
});
const RECORDS = ["b__b-2", "a__a-1", "b__b-1"].map(record);

function write(name: string, content: string | Buffer): string {
  const path = join(tempDir(), name);
  writeFileSync(path, content);
  return path;
}

describe("local files", () => {
  it("reads .json, .jsonl and .parquet files alike", async () => {
    const json = write("d.json", JSON.stringify(RECORDS));
    const jsonl = write("d.jsonl", `${RECORDS.map((r) => JSON.stringify(r)).join("\n")}\n\n`);
    const parquet = write("d.parquet", parquetBuffer(RECORDS));
    for (const subset of [json, jsonl, parquet]) expect(await loadInstances({ subset })).toEqual(RECORDS);
  });

  it("turns parquet integers into numbers where safe and reads other codecs", async () => {
    const rows = [{ ...record("a__a-1"), small: 42n, huge: 2n ** 60n }];
    const compressors = { GZIP: (input: Uint8Array) => new Uint8Array(gzipSync(input)) };
    const path = write("gzip.parquet", parquetBuffer(rows, { codec: "GZIP", compressors }));
    expect(await readDatasetFile(path)).toEqual([
      { ...record("a__a-1"), small: 42, huge: "1152921504606846976" },
    ]);
  });

  it("names the file and the record that lacks a required field", async () => {
    const noId = write("no-id.json", JSON.stringify([record("a__a-1"), { problem_statement: "x" }]));
    await expect(loadInstances({ subset: noId })).rejects.toThrow(`${noId}: record 1 has no instance_id`);
    const noStatement = write(
      "no-ps.jsonl",
      `${JSON.stringify(record("a__a-1"))}\n{"instance_id": "c__c-1"}\n`,
    );
    await expect(loadInstances({ subset: noStatement })).rejects.toThrow(
      `${noStatement}: record 1 (c__c-1) has no problem_statement`,
    );
    const parquet = write("no-ps.parquet", parquetBuffer([{ instance_id: "a__a-1", repo: "o/r" }]));
    await expect(loadInstances({ subset: parquet })).rejects.toThrow(
      `${parquet}: record 0 (a__a-1) has no problem_statement`,
    );
    const notObject = write("array.json", JSON.stringify([["a"]]));
    await expect(loadInstances({ subset: notObject })).rejects.toThrow(
      `${notObject}: record 0 is not an object`,
    );
  });

  it("refuses instance ids that appear more than once among those selected, naming them", async () => {
    const twice = write(
      "twice.json",
      JSON.stringify([
        record("a__a-1"),
        record("b__b-1"),
        record("a__a-1"),
        record("c__c-1"),
        record("b__b-1"),
      ]),
    );
    await expect(loadInstances({ subset: twice })).rejects.toThrow(
      `${twice}: instance_id appears more than once: a__a-1 (records 0, 2); b__b-1 (records 1, 4); give each instance its own id`,
    );
    await expect(loadInstances({ subset: twice, instanceIds: "a__a-1,c__c-1" })).rejects.toThrow(
      "a__a-1 (records 0, 2); give",
    );
    expect(await loadInstances({ subset: twice, instanceIds: "c__c-1" })).toEqual([record("c__c-1")]);
  });

  it("says what is wrong with a file that cannot be read", async () => {
    const badLine = write("bad.jsonl", `${JSON.stringify(record("a__a-1"))}\n{oops\n`);
    await expect(loadInstances({ subset: badLine })).rejects.toThrow(
      new RegExp(`^${badLine} line 2: invalid JSON`),
    );
    const notArray = write("object.json", JSON.stringify({ "a__a-1": record("a__a-1") }));
    await expect(loadInstances({ subset: notArray })).rejects.toThrow(
      `${notArray}: expected a JSON array of instances`,
    );
    const notParquet = write("fake.parquet", "PAR1 not really");
    await expect(loadInstances({ subset: notParquet })).rejects.toThrow(
      new RegExp(`^${notParquet}: not a readable parquet file`),
    );
    await expect(loadInstances({ subset: "/nonexistent/x.jsonl" })).rejects.toThrow(
      "dataset file not found: /nonexistent/x.jsonl",
    );
    await expect(loadInstances({ subset: "nope" })).rejects.toThrow(
      'unknown --subset "nope": use one of full, verified, lite, multimodal, multilingual, smith, rebench, ' +
        "an owner/name Hugging Face dataset, or a .json, .jsonl or .parquet file",
    );
  });

  it("applies the selection: shuffle, then filter, then ids, then slice", async () => {
    const many = Array.from({ length: 10 }, (_, i) => record(`x__x-${i}`));
    const path = write("many.json", JSON.stringify(many));
    const all = (await loadInstances({ subset: path, shuffle: true })).map((i) => i.instance_id);
    // CPython: random.seed(42); random.shuffle(list(range(10))) gives [7, 3, 2, 8, 5, 6, 9, 4, 0, 1].
    expect(all).toEqual([7, 3, 2, 8, 5, 6, 9, 4, 0, 1].map((i) => `x__x-${i}`));
    const picked = await loadInstances({
      subset: path,
      shuffle: true,
      filter: "x__x-[0-5]",
      instanceIds: "x__x-0,x__x-2,x__x-3,x__x-5,x__x-9",
      slice: "1:",
    });
    expect(picked.map((i) => i.instance_id)).toEqual(["x__x-2", "x__x-5", "x__x-0"]);
  });
});

describe("hub datasets", () => {
  let server: HubServer;

  beforeEach(async () => {
    const lite = [parquetBuffer(RECORDS.slice(0, 2)), parquetBuffer(RECORDS.slice(2))];
    const own = [
      parquetBuffer([record("o__o-1"), { instance_id: "o__o-2", problem_statement: null, repo: "o/r" }]),
    ];
    server = await startHubServer({
      datasets: {
        "princeton-nlp/SWE-bench_Lite": { test: lite, dev: [lite[1] as Buffer] },
        "me/own": { test: own },
      },
    });
    vi.stubEnv("SWERUN_CACHE_DIR", tempDir());
    vi.stubEnv("HF_ENDPOINT", server.url);
    vi.stubEnv("HF_TOKEN", "");
  });

  afterEach(async () => {
    vi.unstubAllEnvs();
    await server.close();
  });

  it("loads a short name's dataset from the hub, all files in order, then from the cache", async () => {
    const lines: string[] = [];
    const onProgress = (line: string) => lines.push(line);
    expect(await loadInstances({ subset: "lite", onProgress })).toEqual(RECORDS);
    expect(lines.at(-1)).toBe("Loaded 3 instances from princeton-nlp/SWE-bench_Lite (test)");
    await server.close();
    await expect(loadInstances({ subset: "princeton-nlp/SWE-bench_Lite", split: "dev" })).rejects.toThrow(
      /no cached copy$/,
    );
    expect(await loadInstances({ subset: "lite", filter: "b", onProgress })).toEqual([
      RECORDS[0],
      RECORDS[2],
    ]);
    expect(lines.at(-2)).toMatch(/^Using cached princeton-nlp\/SWE-bench_Lite \(test\) from /);
  });

  it("names the dataset, split and record that lacks a field", async () => {
    await expect(loadInstances({ subset: "me/own" })).rejects.toThrow(
      "me/own (test): record 1 (o__o-2) has no problem_statement",
    );
  });
});
