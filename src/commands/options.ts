import type { Command } from "cac";
import type { ConfigOverride } from "../config/load.js";
import {
  COMMAND_OPTIONS,
  type CommandName,
  OPTIONS,
  type OptionId,
  type OptionSpec,
} from "./option-table.js";

// What the CLI does with the option table (option-table.ts): a command's flags typed, registered with cac,
// converted from what cac parsed, and turned into config overrides.

/** `-l, --cost-limit <dollars>` → `cost-limit`. */
type LongName<Flag extends string> = Flag extends `${string}--${infer Rest}`
  ? Rest extends `${infer Name} ${string}`
    ? Name
    : Rest
  : never;
/** `cost-limit` → `costLimit`, as cac names the property. */
type CamelCase<Name extends string> = Name extends `${infer Head}-${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : Name;
type PropertyOf<Id extends OptionId> = CamelCase<LongName<(typeof OPTIONS)[Id]["flag"]>>;
type ValueOf<Spec extends OptionSpec> = Spec extends { type: "number" }
  ? number | string
  : Spec extends { type: "list" }
    ? string | string[]
    : Spec["flag"] extends `${string}<${string}>`
      ? string
      : boolean;

/** The flags of a command as its function receives them: one optional property per option. */
export type FlagsOf<C extends CommandName> = {
  [Id in (typeof COMMAND_OPTIONS)[C][number] as PropertyOf<Id>]?: ValueOf<(typeof OPTIONS)[Id]>;
};

function propertyOf(spec: OptionSpec): string {
  const long = /--([\w-]+)/.exec(spec.flag)?.[1] ?? "";
  return long.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

const isSwitch = (spec: OptionSpec) => !spec.flag.includes("<");

/** Registers a command's options with cac, with their help in that command. */
export function addOptions(command: Command, name: CommandName): void {
  for (const id of COMMAND_OPTIONS[name]) {
    const spec: OptionSpec = OPTIONS[id];
    const help = spec.helpIn?.[name] ?? spec.help;
    command.option(spec.flag, help, spec.default === undefined ? undefined : { default: spec.default });
  }
}

/** A number option's value as a number; text that is not a number stays as given, for the check to quote. */
function numberValue(value: unknown): unknown {
  if (value === undefined) return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : value;
}

/**
 * The words that followed each text option in `argv` (`--task x`, `--task=x`, `-t x`), in order, by property.
 * The parser turns a value that reads as a number into one (`-t 0123` → 123, `-t ""` → 0): text options take
 * their words back from here.
 */
function typedWords(name: CommandName, argv: readonly string[]): Map<string, string[]> {
  const properties = new Map<string, string>();
  for (const id of COMMAND_OPTIONS[name]) {
    const spec: OptionSpec = OPTIONS[id];
    if (spec.type === "number" || isSwitch(spec)) continue;
    for (const word of spec.flag.match(/(?<![\w-])-{1,2}[\w-]+/g) ?? [])
      properties.set(word, propertyOf(spec));
  }
  const words = new Map<string, string[]>();
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index] ?? "";
    if (arg === "--") break;
    const equals = arg.indexOf("=");
    const property = properties.get(equals > 0 ? arg.slice(0, equals) : arg);
    const value = equals > 0 ? arg.slice(equals + 1) : argv[index + 1];
    if (property === undefined || value === undefined) continue;
    if (equals <= 0) index++;
    words.set(property, [...(words.get(property) ?? []), value]);
  }
  return words;
}

/**
 * The options cac parsed (untyped) as a command's flags: the one place they are converted. Number options
 * become numbers; a text option the parser made a number gets back the word typed in `argv` (the
 * arguments as parsed).
 */
export function typedFlags<C extends CommandName>(
  name: C,
  parsed: Record<string, unknown>,
  argv: readonly string[] = [],
): FlagsOf<C> {
  const flags = { ...parsed };
  for (const id of COMMAND_OPTIONS[name]) {
    const spec: OptionSpec = OPTIONS[id];
    if (spec.type === "number") flags[propertyOf(spec)] = numberValue(flags[propertyOf(spec)]);
  }
  for (const [property, words] of typedWords(name, argv)) {
    const value = flags[property];
    if (typeof value === "number") flags[property] = words.at(-1);
    else if (Array.isArray(value))
      flags[property] = value.map((item, index) =>
        typeof item === "number" ? (words[index] ?? item) : item,
      );
  }
  return flags as FlagsOf<C>;
}

/** The config overrides a command's flags make, named after their long flag (`--cost-limit`) in errors. */
export function configOverrides<C extends CommandName>(name: C, flags: FlagsOf<C>): ConfigOverride[] {
  const values = flags as Record<string, unknown>;
  const overrides: ConfigOverride[] = [];
  for (const id of COMMAND_OPTIONS[name]) {
    const spec: OptionSpec = OPTIONS[id];
    if (!spec.config) continue;
    const property = propertyOf(spec);
    const given = values[property];
    const value = isSwitch(spec) ? (given ? spec.configValue : undefined) : given;
    const origin = `--${/--([\w-]+)/.exec(spec.flag)?.[1]}`;
    overrides.push({ path: spec.config, value, origin });
  }
  return overrides;
}
