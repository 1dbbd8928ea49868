import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  globalConfigPath,
  lookupSetting,
  maskSecret,
  readEnvFile,
  writeGlobalSetting,
} from "../../src/config/keys.js";

function places() {
  const cwd = mkdtempSync(join(tmpdir(), "swerun-keys-cwd-"));
  const globalDir = mkdtempSync(join(tmpdir(), "swerun-keys-global-"));
  return { cwd, globalDir };
}

describe("lookupSetting", () => {
  it("looks in the environment, then .env in the current directory, then the global config file", () => {
    const { cwd, globalDir } = places();
    const env: NodeJS.ProcessEnv = { SWERUN_GLOBAL_CONFIG_DIR: globalDir };
    writeGlobalSetting("OPENAI_API_KEY", "from-global", env);
    expect(lookupSetting(["OPENAI_API_KEY"], { env, cwd })).toEqual({
      name: "OPENAI_API_KEY",
      value: "from-global",
      source: join(globalDir, ".env"),
    });
    writeFileSync(join(cwd, ".env"), "OPENAI_API_KEY=from-dotenv\n");
    expect(lookupSetting(["OPENAI_API_KEY"], { env, cwd })?.value).toBe("from-dotenv");
    expect(
      lookupSetting(["OPENAI_API_KEY"], { env: { ...env, OPENAI_API_KEY: "from-env" }, cwd }),
    ).toMatchObject({
      value: "from-env",
      source: "environment",
    });
  });

  it("skips empty values and tries every name in each place", () => {
    const { cwd, globalDir } = places();
    const env = { SWERUN_GLOBAL_CONFIG_DIR: globalDir, TOGETHER_API_KEY: "", TOGETHERAI_API_KEY: "second" };
    expect(lookupSetting(["TOGETHER_API_KEY", "TOGETHERAI_API_KEY"], { env, cwd })?.value).toBe("second");
    expect(lookupSetting(["NOPE"], { env, cwd })).toBeUndefined();
  });
});

describe("writeGlobalSetting", () => {
  it("keeps the file at mode 0600 and round-trips quotes", () => {
    const { globalDir } = places();
    const env = { SWERUN_GLOBAL_CONFIG_DIR: join(globalDir, "nested") };
    const path = writeGlobalSetting("A", 'it\'s "quoted" # not a comment', env);
    writeGlobalSetting("B", "plain", env);
    expect(path).toBe(globalConfigPath(env));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readEnvFile(path)).toEqual({ A: 'it\'s "quoted" # not a comment', B: "plain" });
    writeGlobalSetting("A", undefined, env);
    expect(readEnvFile(path)).toEqual({ B: "plain" });
    expect(readFileSync(path, "utf8")).toBe("B='plain'\n");
  });
});

describe("maskSecret", () => {
  it("shows at most the last four characters of long values", () => {
    expect(maskSecret("sk-0123456789abcdefWXYZ")).toBe("****WXYZ");
    expect(maskSecret("short")).toBe("****");
  });
});
