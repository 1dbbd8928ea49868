import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { writeDataset } from "../helpers/datasets.js";
import { tempDir } from "../helpers/tmp.js";

const LOCAL = ["--environment-class", "local", "-c", "swebench", "-c", "swebench-demo", "-q"];
const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8"));

describe("shards", () => {
  it("4 shards cover the dataset exactly once, and merged preds equal a single run's", async () => {
    const root = tempDir();
    const dataset = writeDataset(root, 7);
    const single = await runCli(["swebench", "--subset", dataset, ...LOCAL, "-o", join(root, "single")]);
    expect(single.code, single.stderr).toBe(0);
    const shards = [1, 2, 3, 4].map((i) => join(root, "runs", `v-shard${i}`));
    const results = await Promise.all(
      shards.map((dir, i) =>
        runCli(["swebench", "--subset", dataset, ...LOCAL, "--shard", `${i + 1}/4`, "-o", dir]),
      ),
    );
    for (const [i, dir] of shards.entries()) {
      expect(results[i]?.code, results[i]?.stderr).toBe(0);
      expect(readJson(join(dir, "run.json")).dataset.shard).toBe(`${i + 1}/4`);
    }
    const ids = shards.map((dir) => Object.keys(readJson(join(dir, "preds.json"))));
    expect(ids.map((list) => list.length)).toEqual([2, 2, 2, 1]);
    expect(ids.flat().sort()).toEqual(Object.keys(readJson(join(root, "single", "preds.json"))).sort());

    const merged = await runCli(["preds", ...shards, "--merge-shards", "-o", join(root, "merged.json")]);
    expect(merged.code).toBe(0);
    expect(merged.stderr).toBe("all 4 shards of the run\n");
    const mergedPreds = readJson(join(root, "merged.json"));
    const singlePreds = readJson(join(root, "single", "preds.json"));
    expect(Object.keys(mergedPreds).sort()).toEqual(Object.keys(singlePreds).sort());
    for (const id of Object.keys(singlePreds))
      expect(mergedPreds[id].model_patch).toBe(singlePreds[id].model_patch);

    const partial = await runCli(["preds", ...shards.slice(0, 3), "--merge-shards"]);
    expect(partial.stderr).toContain("shards missing: 4/4");
    const mixed = await runCli(["preds", shards[0] as string, join(root, "single"), "--merge-shards"]);
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toMatch(/^swerun: --merge-shards: .*single: not a shard \(no --shard\)\n$/);

    const listed = JSON.parse(
      (await runCli(["runs", "list", "--json", "--merge-shards", "--dir", join(root, "runs")])).stdout,
    );
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ cases_finished: 7, cases_total: 7, submitted: 7, state: "complete" });
    const separate = JSON.parse(
      (await runCli(["runs", "list", "--json", "--dir", join(root, "runs")])).stdout,
    );
    expect(separate).toHaveLength(4);
  });
});
