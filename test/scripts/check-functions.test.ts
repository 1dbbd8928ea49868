import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.js";
import { sourceTree } from "../helpers/source-tree.js";

const SCRIPT = join(packageRoot(), "scripts", "check-functions.mjs");

/** A function body of `count` statement lines. */
const body = (count: number) =>
  Array.from({ length: count }, (_, index) => `  total += ${index};\n`).join("");

const check = (src: string, limit?: number) =>
  spawnSync(process.execPath, [SCRIPT, src, ...(limit === undefined ? [] : [String(limit)])], {
    encoding: "utf8",
  });

describe("scripts/check-functions.mjs (part of npm run check)", () => {
  it("passes the real src/", () => {
    const result = check(join(packageRoot(), "src"));
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/functions: \d+ over 60 lines \(limit \d+\)/);
  });

  it("reports each function over 60 lines with its file, name and length, and not one of 60", () => {
    const src = sourceTree({
      "a/long.ts": `export function long(): number {\n  let total = 0;\n${body(57)}  return total;\n}\n`,
      "a/fits.ts": `export function fits(): number {\n  let total = 0;\n${body(56)}  return total;\n}\n`,
      "b/class.ts": `export class Grader {\n  grade(): number {\n    let total = 0;\n${body(60)}    return total;\n  }\n}\n`,
      "b/arrow.ts": `export const outer = () => {\n  const inner = (): number => {\n    let total = 0;\n${body(60)}    return total;\n  };\n  return inner;\n};\n`,
    });
    const result = check(src, 4);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^61\t\S*a\/long\.ts:1\tlong$/m);
    expect(result.stdout).toMatch(/64\t\S*b\/class\.ts:2\tGrader\.grade\n/);
    expect(result.stdout).toMatch(/64\t\S*b\/arrow\.ts:2\touter > inner\n/);
    expect(result.stdout).toMatch(/67\t\S*b\/arrow\.ts:1\touter\n/);
    expect(result.stdout).not.toContain("fits");
    expect(result.stdout).toContain("functions: 4 over 60 lines");
  });

  it("fails when more functions than the limit are over 60 lines", () => {
    const files: Record<string, string> = {};
    for (let index = 0; index < 40; index++) {
      files[`x/f${index}.ts`] =
        `export function f${index}(): number {\n  let total = 0;\n${body(60)}  return total;\n}\n`;
    }
    const result = check(sourceTree(files), 39);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/functions: 40 over 60 lines \(limit \d+\): split/);
  });

  it("fails on a file that does not parse, naming it", () => {
    const result = check(sourceTree({ "x/broken.ts": "export function (\n" }));
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/broken\.ts: does not parse/);
  });
});
