import { copyFileSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/config-error.js";
import { BUILTIN_READINGS, parseConfigText, readConfigFile } from "../../src/config/config-file.js";
import { loadConfig, parseKeyValueSpec } from "../../src/config/load.js";
import { packageRoot } from "../../src/util/package-root.js";
import { tempDir } from "../helpers/tmp.js";

const MINIMAL = `
agent:
  system_template: "sys"
  instance_template: "{{task}}"
model:
  model_class: deterministic
  observation_template: "{{output.output}}"
  format_error_template: "bad"
  outputs: []
`;

function file(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("expected a ConfigError");
}

afterEach(() => {
  delete process.env.SWERUN_CONFIG_DIR;
});

describe("loadConfig", () => {
  it("loads the built-in default when no file is given, with template files read in", () => {
    const config = loadConfig([]);
    expect(config.model.model_class).toBe("openai");
    expect(config.agent.system_template).toMatch(/autonomous software engineer/);
    expect(config.environment).toMatchObject({ environment_class: "local", timeout: 30 });
    expect(config.agent).toMatchObject({ step_limit: 0, cost_limit: 3, max_consecutive_format_errors: 3 });
  });

  it("finds built-in configs by name with or without .yaml", () => {
    expect(loadConfig(["demo"]).model.model_class).toBe("deterministic");
    expect(loadConfig(["demo.yaml"]).model.model_name).toBe("deterministic/demo");
  });

  it("finds configs in SWERUN_CONFIG_DIR", () => {
    const dir = tempDir();
    file(dir, "mine.yaml", MINIMAL);
    process.env.SWERUN_CONFIG_DIR = dir;
    expect(loadConfig(["mine"]).agent.system_template).toBe("sys");
  });

  it("merges later specs recursively over earlier ones, then CLI flags over both", () => {
    const dir = tempDir();
    const a = file(dir, "a.yaml", MINIMAL);
    const b = file(dir, "b.yaml", "agent:\n  step_limit: 5\nenvironment:\n  env: {A: '1'}\n");
    const config = loadConfig(
      [a, b, "environment.env.B=2", "agent.cost_limit=1.5", 'model.model_kwargs={"temperature": 0}'],
      [{ path: "agent.cost_limit", value: 0.25, origin: "--cost-limit" }],
    );
    expect(config.agent).toMatchObject({ system_template: "sys", step_limit: 5, cost_limit: 0.25 });
    expect(config.environment.env).toEqual({ A: "1", B: "2" });
    expect(config.model.model_kwargs).toEqual({ temperature: 0 });
  });

  it("parses key=value as JSON when it parses, else as a string", () => {
    expect(parseKeyValueSpec("a.b=3")?.value).toBe(3);
    expect(parseKeyValueSpec("a.b=[1,2]")?.value).toEqual([1, 2]);
    expect(parseKeyValueSpec("a.b=hello world")?.value).toBe("hello world");
    expect(parseKeyValueSpec("a.b=")?.value).toBe("");
    expect(parseKeyValueSpec("just/a/path.yaml")).toBeUndefined();
  });

  it("names the file and key path of an unknown key", () => {
    const dir = tempDir();
    const bad = file(dir, "bad.yaml", "agent:\n  step_limt: 3\n");
    expect(errorOf(() => loadConfig([file(dir, "ok.yaml", MINIMAL), bad]))).toBe(
      `${bad}: agent.step_limt: unknown key`,
    );
  });

  it("names the file and key path of a wrong type", () => {
    const dir = tempDir();
    const bad = file(dir, "bad.yaml", `${MINIMAL}\nenvironment:\n  timeout: soon\n`);
    expect(errorOf(() => loadConfig([bad]))).toMatch(
      new RegExp(`^${bad}: environment.timeout: Invalid input: expected number, received string$`),
    );
  });

  it("names the flag of a bad CLI value", () => {
    expect(
      errorOf(() =>
        loadConfig(["demo"], [{ path: "agent.cost_limit", value: "lots", origin: "--cost-limit" }]),
      ),
    ).toMatch(/^--cost-limit: agent.cost_limit: Invalid input/);
    expect(errorOf(() => loadConfig(["demo", "agent.mode=sometimes"]))).toMatch(
      /^-c agent.mode=sometimes: agent.mode: /,
    );
  });

  it("reports malformed YAML with the file, line and column", () => {
    const dir = tempDir();
    const bad = file(dir, "bad.yaml", "agent:\n  step_limit: [1, 2\nmodel: {}\n");
    const message = errorOf(() => loadConfig([bad]));
    expect(message).toMatch(new RegExp(`^${bad}: line \\d+, column \\d+: malformed YAML: `));
    expect(message).not.toContain("\n");
  });

  it("reports a config that is not a mapping, and a missing file", () => {
    const dir = tempDir();
    expect(errorOf(() => loadConfig([file(dir, "list.yaml", "- a\n- b\n")]))).toMatch(/expected a mapping/);
    expect(errorOf(() => loadConfig(["no-such-config"]))).toMatch(/^config "no-such-config": no such file/);
  });

  it("says which required key no config sets", () => {
    const dir = tempDir();
    const partial = file(dir, "p.yaml", "agent:\n  system_template: x\n");
    expect(errorOf(() => loadConfig([partial]))).toMatch(
      /^agent.instance_template: required, but no config sets it/,
    );
  });

  it("reads a block scalar that ends the file without a line break as PyYAML does (no trailing newline)", () => {
    const dir = tempDir();
    const body = `${MINIMAL.replace('  format_error_template: "bad"\n', "")}\n  format_error_template: |\n    line one\n    {{ error }}`;
    expect(loadConfig([file(dir, "eof.yaml", body)]).model.format_error_template).toBe(
      "line one\n{{ error }}",
    );
    const kept = loadConfig([file(dir, "eol.yaml", `${body}\n`)]);
    expect(kept.model.format_error_template).toBe("line one\n{{ error }}\n");
  });

  it("refuses mini-swe-agent keys swerun does not support, saying what to do", () => {
    const dir = tempDir();
    const v1 = file(dir, "v1.yaml", `${MINIMAL}\n  litellm_model_name_override: 'x'\n`);
    expect(errorOf(() => loadConfig([v1]))).toBe(
      `${v1}: model.litellm_model_name_override is not supported: set model_name to the name the endpoint expects`,
    );
    const old = file(dir, "old.yaml", "agent:\n  action_observation_template: x\n");
    expect(errorOf(() => loadConfig([old]))).toMatch(
      /agent.action_observation_template is a mini-swe-agent 1.x key; use model.observation_template/,
    );
    expect(errorOf(() => loadConfig(["demo", "environment.environment_class=singularity"]))).toMatch(
      /environment.environment_class: "singularity" \(mini-swe-agent's Singularity\/Apptainer\) does not run in swerun: use docker, bubblewrap or kubernetes$/,
    );
    expect(errorOf(() => loadConfig(["demo", "model.model_class=first_then"]))).toMatch(
      /model.model_class: "first_then" is not supported/,
    );
  });

  it("accepts mini-swe-agent's class paths and float-written integers", () => {
    const dir = tempDir();
    const mini = file(
      dir,
      "mini.yaml",
      `${MINIMAL.replace("model_class: deterministic", "model_class: minisweagent.models.test_models.DeterministicModel")}
  step_limit: 0.
environment:
  environment_class: minisweagent.environments.local.LocalEnvironment
  env: {PAGER: cat, TQDM_DISABLE: '1'}
`.replace("  step_limit: 0.\n", ""),
    );
    const config = loadConfig([
      mini,
      file(dir, "floats.yaml", "agent:\n  step_limit: 3.\n  max_consecutive_format_errors: 2.\n"),
    ]);
    expect(config.model.model_class).toBe("deterministic");
    expect(config.environment.environment_class).toBe("local");
    expect(config.agent.step_limit).toBe(3);
    expect(config.agent.max_consecutive_format_errors).toBe(2);
  });

  it("requires outputs for the deterministic model", () => {
    const dir = tempDir();
    const noOutputs = file(dir, "n.yaml", MINIMAL.replace("  outputs: []\n", ""));
    expect(errorOf(() => loadConfig([noOutputs]))).toMatch(
      /model.outputs: required when model_class is deterministic/,
    );
  });

  it("reports a template file that does not exist", () => {
    const dir = tempDir();
    const bad = file(
      dir,
      "t.yaml",
      `${MINIMAL}\n`.replace('system_template: "sys"', "system_template: {file: nope.j2}"),
    );
    expect(errorOf(() => loadConfig([bad]))).toBe(
      `${bad}: agent.system_template: template file not found: nope.j2`,
    );
  });
});

describe("readConfigFile", () => {
  // Expected values: PyYAML 6's safe_load (mini-swe-agent's reader) of the same text.
  it("reads JSON text as PyYAML does (through JSON.parse), a repeated key's last value included", () => {
    const dir = tempDir();
    const text = String.raw`{"agent": {"cost_limit": 1.5, "step_limit": 3, "whitelist_actions": ["a\tb", "\u00e9", "x\/y"]}, "model": {"model_kwargs": {"z": -0.5, "n": null, "t": true, "big": 12345678901, "k": 1, "k": 2}}}`;
    expect(readConfigFile(file(dir, "c.yaml", text))).toEqual({
      agent: { cost_limit: 1.5, step_limit: 3, whitelist_actions: ["a\tb", "\u00e9", "x/y"] },
      model: { model_kwargs: { z: -0.5, n: null, t: true, big: 12345678901, k: 2 } },
    });
  });

  it("reads the built-in configs from the build's reading, the same as their YAML", () => {
    const readings = JSON.parse(readFileSync(join(packageRoot(), BUILTIN_READINGS), "utf8"));
    const dir = join(tempDir(), "config");
    mkdirSync(dir);
    symlinkSync(join(packageRoot(), "templates"), join(dir, "..", "templates"));
    const names = readdirSync(join(packageRoot(), "config")).filter((name) => name.endsWith(".yaml"));
    expect(Object.keys(readings).sort()).toEqual(names.sort());
    for (const name of names) {
      const builtin = join(packageRoot(), "config", name);
      expect(readings[name].data).toEqual(parseConfigText(readFileSync(builtin, "utf8")));
      // A copy elsewhere (beside the same templates) goes through the YAML parser.
      copyFileSync(builtin, join(dir, name));
      const copy = JSON.stringify(readConfigFile(join(dir, name))).replaceAll(
        dir,
        join(packageRoot(), "config"),
      );
      expect(readConfigFile(builtin)).toEqual(JSON.parse(copy));
    }
  });
});
