import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import type Docker from "dockerode";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { evalInstances } from "../../src/eval/eval-instance.js";
import { makeEvalScript } from "../../src/eval/eval-script.js";
import {
  injectAssetRestore,
  parseImageAssets,
  restoreCommand,
  stagedLine,
  stageImageAssets,
  taskRepoAssetPath,
} from "../../src/eval/image-assets.js";
import { packageRoot } from "../../src/util/package-root.js";
import { runCli } from "../helpers/cli.js";
import { describeDocker, dockerFixture } from "../helpers/docker.js";
import { EVAL_FIXTURES, ensureEvalImage } from "../helpers/eval-images.js";
import { tempDir } from "../helpers/tmp.js";

/** How SWE-bench 5.0.2 staged the same assets (scripts/gen-eval-fixtures.py). */
const HARNESS = JSON.parse(
  readFileSync(join(packageRoot(), "test", "fixtures", "eval", "image-assets.json"), "utf8"),
) as {
  image_assets: Record<string, unknown>;
  restore: string[];
  eval_script: string;
  no_marker: string;
  log: Array<[string, string]>;
  staged: Record<string, string>;
  bytes: Record<string, string>;
};
const BYTES = Object.fromEntries(
  Object.entries(HARNESS.bytes).map(([path, data]) => [path, Buffer.from(data, "base64")]),
);
const GOLD_ID = "swerun-test__mathx-gold";
const goldRow = () =>
  (
    JSON.parse(readFileSync(join(EVAL_FIXTURES, "dataset.json"), "utf8")) as Array<Record<string, unknown>>
  ).find((row) => row.instance_id === GOLD_ID) as Record<string, unknown>;

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** Serves the expected.png asset over HTTP; returns the row's image_assets with its URL. */
async function servedAssets(): Promise<Record<string, unknown>> {
  server = createServer((_request, response) => response.end(BYTES["tests/data/expected.png"]));
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/expected.png`;
  return JSON.parse(JSON.stringify(HARNESS.image_assets).replace("{url}", url));
}

/**
 * A SWE-bench task repo holding the gold instance (task.yaml, tests.json, eval.sh, the patches, the problem
 * statement) and its baseline.bin asset; `row` is the instance as the dataset would have it.
 */
function taskRepo(dir: string, row: Record<string, unknown> = goldRow()): string {
  const repo = join(dir, "task-repo");
  const path = taskRepoAssetPath(repo, GOLD_ID, "tests/data/baseline.bin");
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, BYTES["tests/data/baseline.bin"] as Buffer);
  const task = join(repo, "tasks", GOLD_ID);
  const { eval_script, FAIL_TO_PASS, PASS_TO_PASS, problem_statement, ...meta } = row;
  writeFileSync(join(task, "task.yaml"), stringify({ ...meta, split: "test" }));
  writeFileSync(
    join(task, "tests.json"),
    JSON.stringify({
      FAIL_TO_PASS: JSON.parse(String(FAIL_TO_PASS)),
      PASS_TO_PASS: JSON.parse(String(PASS_TO_PASS)),
    }),
  );
  writeFileSync(join(task, "eval.sh"), String(eval_script));
  writeFileSync(join(task, "problem_statement.md"), String(problem_statement));
  for (const file of ["gold.patch", "test.patch"]) writeFileSync(join(task, file), "");
  return repo;
}

describe("image_assets: binary patch assets staged and restored as the harness does", () => {
  it("reads test_patch then patch entries with a path; a malformed value names the instance and field", () => {
    expect(parseImageAssets(JSON.stringify(HARNESS.image_assets))).toEqual([
      { path: "tests/data/baseline.bin" },
      { path: "tests/data/expected.png", url: "{url}" },
      { path: "docs/missing.png" },
    ]);
    expect(parseImageAssets(null)).toEqual([]);
    expect(parseImageAssets({ test_patch: [{ url: "x" }], problem_statement: ["u"] })).toEqual([]);
    const row = { ...goldRow(), image_assets: '{"test_patch": ["http://x/a.png"]}' };
    expect(() => evalInstances([row as never], "ds.json")).toThrow(
      `ds.json: ${GOLD_ID}: image_assets.test_patch.0 must be an object with path (and url)`,
    );
  });

  it("refuses an asset path that would read or stage a file outside its folder (`..`, absolute, NUL)", () => {
    for (const path of ["../../../etc/shadow", "/etc/shadow", "a/../../x", "..", "a\0b"])
      expect(() => parseImageAssets({ patch: [{ path }] }), path).toThrow(
        `image_assets.patch.0.path ${JSON.stringify(path)} is not a file path inside the repository`,
      );
  });

  it("stages from the task repo, then the URL, warns about the rest; the restore lines go before the start marker", async () => {
    const dir = tempDir();
    const assets = parseImageAssets(await servedAssets());
    const warnings: string[] = [];
    const logDir = join(dir, "log");
    const staged = await stageImageAssets({
      instanceId: GOLD_ID,
      assets,
      logDir,
      taskRepo: taskRepo(dir),
      warn: (message) => warnings.push(message),
    });
    const restore = staged.map((asset) => restoreCommand(asset.path));
    expect(restore).toEqual(HARNESS.restore);
    expect([...warnings.map((w) => ["WARNING", w]), ["INFO", stagedLine(staged)]]).toEqual(HARNESS.log);
    for (const [flat, data] of Object.entries(HARNESS.staged))
      expect(readFileSync(join(logDir, "image_assets", flat))).toEqual(Buffer.from(data, "base64"));
    const script = makeEvalScript(goldRow().eval_script as string);
    expect(injectAssetRestore(script, restore)).toBe(HARNESS.eval_script);
    expect(injectAssetRestore("#!/bin/bash\necho hi\n", restore)).toBe(HARNESS.no_marker);
  });
});

await describeDocker("image_assets in Docker", () => {
  let docker: Docker;
  let image: string;
  beforeAll(async () => {
    ({ docker } = await dockerFixture());
    image = await ensureEvalImage(docker);
  });

  it("swerun eval restores the assets in the working tree before the tests run, and still resolves", async () => {
    const dir = tempDir();
    // The instance comes from the task repo (as with the harness's --task-repo), image_assets included.
    const row = { ...goldRow(), image, image_assets: await servedAssets() };
    const repo = taskRepo(dir, row);
    const predictions = JSON.parse(readFileSync(join(EVAL_FIXTURES, "preds.json"), "utf8"));
    const preds = join(dir, "preds.json");
    writeFileSync(preds, JSON.stringify({ [GOLD_ID]: predictions[GOLD_ID] }));
    const runId = `assets-${dir.split("-").at(-1)}`;
    const out = join(dir, "out");
    const args = ["eval", preds, "--task-repo", repo, "--run-id", runId, "--network", "none", "-o", out];
    const result = await runCli([...args, "--keep"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("resolved: 1/1");
    const kept = /docker exec -it (\S+) bash/.exec(result.stderr)?.[1] as string;
    expect(kept).toBeTruthy();
    const container = docker.getContainer(kept);
    try {
      for (const [path, data] of Object.entries(BYTES)) {
        const archive = await container.getArchive({ path: `/testbed/${path}` });
        const chunks: Buffer[] = [];
        for await (const chunk of archive) chunks.push(chunk as Buffer);
        const tar = Buffer.concat(chunks);
        // A one-file tar: 512-byte header, then the file's bytes.
        expect(tar.subarray(512, 512 + data.length)).toEqual(data);
      }
    } finally {
      await container.remove({ force: true });
    }
    const logs = join(out, "logs", "run_evaluation", runId, "test__model", GOLD_ID);
    expect(readFileSync(join(logs, "eval.sh"), "utf8")).toBe(HARNESS.eval_script);
    const log = readFileSync(join(logs, "run_instance.log"), "utf8");
    expect(log).toContain(`WARNING - No asset for ${GOLD_ID} at docs/missing.png`);
    expect(log).toContain(`INFO - ${HARNESS.log[1]?.[1]}`);
    const metadata = JSON.parse(readFileSync(join(out, "logs", "run_evaluation", runId, "run.json"), "utf8"));
    expect(metadata.task_repo).toBe(join(dir, "task-repo"));
  });
});
