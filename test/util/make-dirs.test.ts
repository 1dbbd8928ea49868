import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { makeDirsSync, removeMadeDirs } from "../../src/util/make-dirs.js";
import { outputDirProblem } from "../../src/util/output-dir.js";
import { tempDir } from "../helpers/tmp.js";

describe("removeMadeDirs", () => {
  it("removes the folders makeDirsSync made, deepest first", () => {
    const root = tempDir();
    const dir = join(root, "a", "b", "c");
    const made = makeDirsSync(dir);
    expect(made).toBe(join(root, "a"));
    removeMadeDirs(made as string, dir);
    expect(existsSync(join(root, "a"))).toBe(false);
    expect(existsSync(root)).toBe(true);
  });

  it("keeps a made folder that another process wrote into meanwhile, and the folders above it", () => {
    const root = tempDir();
    const dir = join(root, "runs", "shard1");
    const made = makeDirsSync(dir) as string;
    // A parallel shard puts its own output folder into the shared parent.
    mkdirSync(join(root, "runs", "shard2"));
    writeFileSync(join(root, "runs", "shard2", "run.json"), "{}");
    removeMadeDirs(made, dir);
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(join(root, "runs", "shard2", "run.json"))).toBe(true);
  });

  it("leaves no folder behind after an output folder check", () => {
    const root = tempDir();
    expect(outputDirProblem(join(root, "x", "y"))).toBeUndefined();
    expect(existsSync(join(root, "x"))).toBe(false);
  });
});
