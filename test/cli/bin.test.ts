import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.js";
import { CLI } from "../helpers/cli.js";

/** The CLI itself (src/cli.ts as the build bundles it), which the bin loads for everything but help and version. */
const FULL_CLI = join(packageRoot(), "dist", "src", "cli-main.js");

const output = (cli: string, args: string[]) =>
  execFileSync(process.execPath, [cli, ...args], {
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });

describe("the bin", () => {
  it("answers --help and --version with exactly what the CLI prints, without loading it", () => {
    for (const args of [[], ["--help"], ["-h"], ["--version"], ["-v"]]) {
      expect(output(CLI, args), args.join(" ")).toBe(output(FULL_CLI, args));
    }
    expect(output(CLI, ["--help"])).toMatch(/^swerun\/\d+\.\d+\.\d+\n\nUsage:/);
  });

  it("passes everything else to the CLI", () => {
    expect(output(CLI, ["run", "--help"])).toBe(output(FULL_CLI, ["run", "--help"]));
    expect(output(CLI, ["run", "--help"])).toMatch(/--environment-class/);
  });
});
