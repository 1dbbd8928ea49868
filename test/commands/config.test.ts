import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { runConfigCommand } from "../../src/commands/config.js";
import { UserError } from "../../src/errors.js";

let dir: string;
let out: string;

beforeEach(() => {
  dir = join(mkdtempSync(join(tmpdir(), "swerun-config-cmd-")), "swerun");
  vi.stubEnv("SWERUN_GLOBAL_CONFIG_DIR", dir);
  out = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

const secret = "sk-ant-0123456789-very-secret-ABCD";

describe("swerun config", () => {
  it("set stores the key in the global file with mode 0600", async () => {
    expect(await runConfigCommand("set", "ANTHROPIC_API_KEY", secret)).toBe(0);
    const path = join(dir, ".env");
    expect(out).toBe(`Set ANTHROPIC_API_KEY in ${path}\n`);
    expect(out).not.toContain(secret);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, "utf8")).toBe(`ANTHROPIC_API_KEY='${secret}'\n`);
  });

  it("show lists the keys with masked values", async () => {
    await runConfigCommand("set", "ANTHROPIC_API_KEY", secret);
    await runConfigCommand("set", "SWERUN_COST_TRACKING", "ignore_errors");
    out = "";
    expect(await runConfigCommand("show")).toBe(0);
    expect(out).toBe(`${join(dir, ".env")}\n  ANTHROPIC_API_KEY=****ABCD\n  SWERUN_COST_TRACKING=****\n`);
  });

  it("show says when nothing is set", async () => {
    await runConfigCommand("show");
    expect(out).toContain("(nothing set)");
  });

  it("unset removes the key and says when there was none", async () => {
    await runConfigCommand("set", "OPENAI_API_KEY", secret);
    await runConfigCommand("set", "GROQ_API_KEY", "gsk-1234");
    expect(await runConfigCommand("unset", "OPENAI_API_KEY")).toBe(0);
    expect(readFileSync(join(dir, ".env"), "utf8")).toBe("GROQ_API_KEY='gsk-1234'\n");
    out = "";
    expect(await runConfigCommand("unset", "OPENAI_API_KEY")).toBe(0);
    expect(out).toContain("OPENAI_API_KEY was not set");
  });

  it("rejects bad usage with one-line user errors", async () => {
    await expect(runConfigCommand("set", "OPENAI_API_KEY")).rejects.toThrow(/missing VALUE/);
    await expect(runConfigCommand("set")).rejects.toThrow(/missing KEY/);
    await expect(runConfigCommand("set", "BAD-NAME", "x")).rejects.toThrow(/not a variable name/);
    await expect(runConfigCommand("list")).rejects.toThrow(UserError);
    await expect(runConfigCommand("list")).rejects.toThrow(/unknown action "list"/);
  });
});
