import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { parse as parseDotenv } from "dotenv";
import envPaths from "env-paths";
import { isCredentialName, registerCredential } from "../util/secrets.js";

/** A setting (API key, base URL, SWERUN_* variable) and where it was found. */
export interface Setting {
  name: string;
  value: string;
  /** "environment", the `.env` path, or the global config path: for messages, never the value. */
  source: string;
}

/** Where settings are looked up; tests pass their own. */
export interface SettingsContext {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** The directory of swerun's global config: `SWERUN_GLOBAL_CONFIG_DIR`, else the user's config dir (e.g. ~/.config/swerun). */
export function globalConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.SWERUN_GLOBAL_CONFIG_DIR;
  return override ? resolve(override) : envPaths("swerun", { suffix: "" }).config;
}

/** The global config file (`KEY=value` lines, mode 0600) written by `swerun config set`. */
export function globalConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(globalConfigDir(env), ".env");
}

/** Reads a dotenv file; a missing file is empty. */
export function readEnvFile(path: string): Record<string, string> {
  if (!existsSync(path)) return {};
  return parseDotenv(readFileSync(path, "utf8"));
}

/**
 * The first of `names` that is set (non-empty), looking in the process environment, then `.env` in the
 * current directory, then the global config file. Earlier names win within each place.
 */
export function lookupSetting(names: readonly string[], context: SettingsContext = {}): Setting | undefined {
  const env = context.env ?? process.env;
  const dotenvPath = join(context.cwd ?? process.cwd(), ".env");
  const globalPath = globalConfigPath(env);
  const places: Array<[string, () => Record<string, string | undefined>]> = [
    ["environment", () => env],
    [dotenvPath, () => readEnvFile(dotenvPath)],
    [globalPath, () => readEnvFile(globalPath)],
  ];
  for (const [source, read] of places) {
    const values = read();
    for (const name of names) {
      const value = values[name];
      if (value) return { name, value, source };
    }
  }
  return undefined;
}

/**
 * Registers as secrets the values of every credential-looking setting (`*_API_KEY`, `HF_TOKEN`, ...) in the
 * process environment, `.env` in the current directory and the global config file: a command may print
 * them (the local environment passes the whole environment on), and swerun redacts them wherever it writes.
 */
export function registerKnownCredentials(context: SettingsContext = {}): void {
  const env = context.env ?? process.env;
  const places = [
    env,
    readEnvFile(join(context.cwd ?? process.cwd(), ".env")),
    readEnvFile(globalConfigPath(env)),
  ];
  for (const values of places) {
    for (const [name, value] of Object.entries(values))
      if (value && isCredentialName(name)) registerCredential(value);
  }
}

function quote(value: string): string {
  if (!value.includes("'")) return `'${value}'`;
  if (!value.includes('"') && !value.includes("\n")) return `"${value}"`;
  if (!value.includes("`")) return `\`${value}\``;
  throw new Error("the value contains all three quote characters (' \" `) and cannot be stored");
}

/** Sets (or, with `undefined`, removes) one key of the global config file; the file is kept at mode 0600. */
export function writeGlobalSetting(
  key: string,
  value: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string {
  const path = globalConfigPath(env);
  const values = readEnvFile(path);
  if (value === undefined) delete values[key];
  else values[key] = value;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const text = Object.entries(values)
    .map(([name, stored]) => `${name}=${quote(stored)}\n`)
    .join("");
  writeFileSync(path, text, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

/** A value for display: never more than its last four characters, and those only for long values. */
export function maskSecret(value: string): string {
  return value.length >= 16 ? `****${value.slice(-4)}` : "****";
}
