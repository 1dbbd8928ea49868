import { cac } from "cac";
import { describe, expect, it } from "vitest";
import {
  COMMAND_OPTIONS,
  type CommandName,
  OPTIONS,
  type OptionSpec,
} from "../../src/commands/option-table.js";
import { addOptions, configOverrides, typedFlags } from "../../src/commands/options.js";
import { configSchema } from "../../src/config/schema.js";

/** Parses argv as `swerun <command> ...` with the command's options registered, as cli.ts does. */
function parse<C extends CommandName>(name: C, argv: string[]) {
  const cli = cac("swerun");
  addOptions(cli.command(name, ""), name);
  const { options } = cli.parse(["node", "swerun", name, ...argv], { run: false });
  return typedFlags(name, options, argv);
}

const names = Object.keys(COMMAND_OPTIONS) as CommandName[];
const specs = (name: CommandName): OptionSpec[] => COMMAND_OPTIONS[name].map((id) => OPTIONS[id]);

describe("the option table", () => {
  it("gives no command two options with the same long name or short alias", () => {
    for (const name of names) {
      const flags = specs(name).flatMap((spec) => spec.flag.match(/(?<![\w-])-{1,2}[\w-]+/g) ?? []);
      expect(flags, name).toEqual([...new Set(flags)]);
    }
  });

  it("uses every option in some command, and names only commands that use it in helpIn", () => {
    const used = new Set(names.flatMap((name) => COMMAND_OPTIONS[name] as readonly string[]));
    expect(Object.keys(OPTIONS).filter((id) => !used.has(id))).toEqual([]);
    for (const [id, spec] of Object.entries(OPTIONS) as [keyof typeof OPTIONS, OptionSpec][]) {
      for (const command of Object.keys(spec.helpIn ?? {}))
        expect(COMMAND_OPTIONS[command as CommandName] as readonly string[], `${id} in ${command}`).toContain(
          id,
        );
    }
  });

  it("points every config key at a key of its config section", () => {
    const sections = configSchema.shape as Record<string, unknown>;
    for (const spec of Object.values(OPTIONS) as OptionSpec[]) {
      if (!spec.config) continue;
      const [section, key] = spec.config.split(".") as [string, string];
      const schema = sections[section] as
        | { shape?: object; def: { options?: { shape: object }[] } }
        | undefined;
      const keys = [schema?.shape, ...(schema?.def.options ?? []).map((option) => option.shape)].flatMap(
        (shape) => Object.keys(shape ?? {}),
      );
      expect(keys, spec.config).toContain(key);
    }
  });
});

describe("flags and overrides", () => {
  it("keeps text options as typed where the parser reads a number", () => {
    expect(parse("run", ["-t", "0123"]).task).toBe("0123");
    expect(parse("run", ["--task=1e3"]).task).toBe("1e3");
    expect(parse("run", ["-t", ""]).task).toBe("");
    expect(parse("run", ["-c", "a.yaml", "-c", "007", "-t", "x"]).config).toEqual(["a.yaml", "007"]);
    expect(parse("swebench", ["--label", "0x10", "-w", "2"])).toMatchObject({ label: "0x10", workers: 2 });
  });

  it("reads number options as numbers and keeps text that is not a number for the check to quote", () => {
    expect(parse("run", ["-l", "2.5"]).costLimit).toBe(2.5);
    expect(parse("swebench", ["-w", "many"]).workers).toBe("many");
    expect(parse("replay", ["--until", "3"]).until).toBe(3);
    expect(parse("eval", []).timeout).toBe(1800);
  });

  it("turns run's flags into config overrides named after their long flag", () => {
    const flags = parse("run", ["-m", "openai/x", "-l", "3", "--yolo", "--exit-immediately", "-o", "t.json"]);
    const given = configOverrides("run", flags).filter((override) => override.value !== undefined);
    expect(given).toEqual([
      { path: "model.model_name", value: "openai/x", origin: "--model" },
      { path: "agent.output_path", value: "t.json", origin: "--output" },
      { path: "agent.cost_limit", value: 3, origin: "--cost-limit" },
      { path: "agent.mode", value: "yolo", origin: "--yolo" },
      { path: "agent.confirm_exit", value: false, origin: "--exit-immediately" },
    ]);
  });

  it("leaves switches that are not given out of the config", () => {
    const overrides = configOverrides("swebench-single", parse("swebench-single", ["-i", "0"]));
    expect(overrides.filter((override) => override.value !== undefined)).toEqual([]);
  });

  it("gives an -o that is not a config key no override (the batch folder, the replay's trajectory)", () => {
    const paths = (name: CommandName, argv: string[]) =>
      configOverrides(name, parse(name, argv)).map((override) => override.path);
    expect(paths("swebench", ["-o", "out"])).not.toContain("agent.output_path");
    expect(paths("replay", ["-o", "r.json"])).not.toContain("agent.output_path");
  });
});
