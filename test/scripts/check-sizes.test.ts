import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.js";
import { sourceTree } from "../helpers/source-tree.js";
import { tempDir } from "../helpers/tmp.js";

const SCRIPT = join(packageRoot(), "scripts", "check-sizes.mjs");

/** `count` statement lines. */
const lines = (count: number) =>
  Array.from({ length: count }, (_, index) => `let v${index} = ${index};\n`).join("");

/** A file of `total` lines holding a class of `classLines` lines. */
const withClass = (name: string, classLines: number, total: number) =>
  `export class ${name} {\n${lines(classLines - 2).replaceAll("let ", "  f")}}\n${lines(total - classLines)}`;

/** Runs the script on `src`, with an allowance list when given. */
function check(src: string, allowed?: { files?: Record<string, number>; classes?: Record<string, number> }) {
  const args = [SCRIPT, src];
  if (allowed) {
    const path = join(tempDir(), "allowed.json");
    writeFileSync(path, JSON.stringify(allowed));
    args.push(path);
  }
  return spawnSync(process.execPath, args, { encoding: "utf8" });
}

describe("scripts/check-sizes.mjs (part of npm run check)", () => {
  it("passes the real src/", () => {
    const result = check(join(packageRoot(), "src"));
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/sizes: \d+ over 450 lines a file or 300 a class, each on the list/);
  });

  it("passes a file of 450 lines and a class of 300, and fails one line more of each, naming them", () => {
    const fits = check(sourceTree({ "a/fits.ts": withClass("Fits", 300, 450) }), {});
    expect(fits.stderr).toBe("");
    expect(fits.status).toBe(0);
    expect(fits.stdout).toContain("sizes: 0 over");

    const long = check(sourceTree({ "a/long.ts": lines(451), "b/big.ts": withClass("Big", 301, 320) }), {});
    expect(long.status).toBe(1);
    expect(long.stderr).toMatch(/\S*a\/long\.ts: file of 451 lines, over 450: cut it along its seams/);
    expect(long.stderr).toMatch(/\S*b\/big\.ts:1: class of 301 lines, over 300: cut it along its seams/);
    expect(long.stderr).not.toContain("big.ts: file");
    expect(long.stdout).toMatch(/^451\t\S*a\/long\.ts\tfile$/m);
    expect(long.stdout).toMatch(/^301\t\S*b\/big\.ts:1\tclass Big$/m);
  });

  it("counts classes nested in functions and class expressions", () => {
    const nested = `export function make() {\n  return class Inner {\n${lines(300).replaceAll("let ", "    f")}  };\n}\n`;
    const result = check(sourceTree({ "a/nested.ts": nested }), {});
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/nested\.ts:2: class of 302 lines/);
  });

  it("lets a listed file or class be at its size or smaller, never larger", () => {
    const src = sourceTree({ "a/long.ts": lines(470), "b/big.ts": withClass("Big", 320, 330) });
    const same = check(src, { files: { "a/long.ts": 470 }, classes: { "b/big.ts#Big": 320 } });
    expect(same.stderr).toBe("");
    expect(same.status).toBe(0);
    expect(same.stdout).toContain("sizes: 2 over 450 lines a file or 300 a class, each on the list");

    const shrunk = check(src, { files: { "a/long.ts": 480 }, classes: { "b/big.ts#Big": 320 } });
    expect(shrunk.status).toBe(0);
    expect(shrunk.stdout).toContain("file a/long.ts is 470 lines: lower its figure from 480");

    const grown = check(src, { files: { "a/long.ts": 469 }, classes: { "b/big.ts#Big": 319 } });
    expect(grown.status).toBe(1);
    expect(grown.stderr).toMatch(/long\.ts: file of 470 lines grew past its 469 \(limit 450\): cut it/);
    expect(grown.stderr).toMatch(/big\.ts:1: class of 320 lines grew past its 319 \(limit 300\): cut it/);
  });

  it("says when a listed file now fits, so its entry goes", () => {
    const result = check(sourceTree({ "a/short.ts": lines(10) }), { files: { "a/short.ts": 500 } });
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("file a/short.ts is 10 lines: drop it from the list");
  });

  it("fails on a file that does not parse, naming it", () => {
    const result = check(sourceTree({ "x/broken.ts": "export class {\n" }), {});
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/broken\.ts: does not parse/);
  });
});
