import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { writeDataset } from "../helpers/datasets.js";
import { tempDir } from "../helpers/tmp.js";

const LOCAL = ["--environment-class", "local", "-c", "swebench", "-c", "swebench-demo", "-q"];

describe("a resumed batch", () => {
  it("counts the earlier instances' costs in the total, as it counts their statuses", async () => {
    const dir = tempDir();
    const dataset = writeDataset(dir, 4);
    const out = join(dir, "out");
    const first = await runCli(["swebench", "--subset", dataset, ...LOCAL, "--slice", "0:2", "-o", out]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("total cost: $0.0600");
    const second = await runCli(["swebench", "--subset", dataset, ...LOCAL, "-o", out]);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain("exit statuses: Submitted 4");
    // Three scripted steps of $0.01 per instance: four instances, two of them from the first process.
    expect(second.stdout).toContain("total cost: $0.1200");
    const record = JSON.parse(readFileSync(join(out, "run.json"), "utf8"));
    expect(record.total_cost).toBeCloseTo(0.12, 10);
  });
});
