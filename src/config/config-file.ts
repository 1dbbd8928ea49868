// Config files: finding one by path or built-in name, and reading it (JSON or YAML 1.1 as PyYAML reads it, the
// build's readings of the built-in configs, template files).

import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { parseDocument, visit, YAMLParseError } from "yaml";
import { packageRoot } from "../util/package-root.js";
import { decodeUtf8 } from "../util/utf8.js";
import { ConfigError } from "./config-error.js";
import { isPlainObject } from "./merge.js";
import { pythonTimestampText } from "./yaml-timestamp.js";

/** How many aliases a YAML file may resolve (PyYAML has no limit; a billion-laughs file needs millions). */
const MAX_YAML_ALIAS_COUNT = 10_000;

/** Directories searched for built-in config names, in order. */
export function configDirs(): string[] {
  const dirs: string[] = [];
  const extra = process.env.SWERUN_CONFIG_DIR;
  if (extra) dirs.push(resolve(extra));
  dirs.push(join(packageRoot(), "config"));
  return dirs;
}

/** Finds the file behind `-c spec`: a path, or a built-in name (`.yaml` optional) in the config dirs. */
export function findConfigFile(spec: string): string {
  const candidates = [spec, `${spec}.yaml`, `${spec}.yml`];
  for (const candidate of candidates) {
    const path = resolve(candidate);
    if (existsSync(path) && statSync(path).isFile()) return path;
  }
  if (!isAbsolute(spec)) {
    for (const dir of configDirs()) {
      for (const candidate of candidates) {
        const path = join(dir, candidate);
        if (existsSync(path) && statSync(path).isFile()) return path;
      }
    }
  }
  const builtins = configDirs().join(", ");
  throw new ConfigError(`config "${spec}": no such file, and no built-in config of that name in ${builtins}`);
}

/** A config or template file's text; bytes that are not UTF-8 are refused (not turned into U+FFFD). */
function readUtf8File(path: string): string {
  return decodeUtf8(
    readFileSync(path),
    (offset, line) => new ConfigError(`${path}: not valid UTF-8 at byte offset ${offset} (line ${line})`),
  );
}

/**
 * YAML 1.1 as PyYAML reads it. Two differences of the `yaml` package are undone: a block scalar (`|`, `>`)
 * that ends the file without a line break has no trailing newline in PyYAML (mini-swe-agent's shipped
 * `mini_textbased.yaml` ends that way, and the template is recorded in every trajectory); and a timestamp
 * (`api_version: 2024-06-01`) is the text Python gives it (yaml-timestamp.ts), not a Date.
 */
function parsePyYaml(text: string): unknown {
  const doc = parseDocument(text, { version: "1.1" });
  const [error] = doc.errors;
  if (error) throw error;
  const endsInBreak = text.endsWith("\n") || text.endsWith("\r");
  visit(doc, {
    Scalar(_key, node) {
      if (node.value instanceof Date) node.value = pythonTimestampText(node.source ?? "");
      if (endsInBreak) return;
      const block = node.type === "BLOCK_LITERAL" || node.type === "BLOCK_FOLDED";
      if (block && node.range?.[1] === text.length && typeof node.value === "string")
        node.value = node.value.replace(/\n$/, "");
    },
  });
  return doc.toJS({ maxAliasCount: MAX_YAML_ALIAS_COUNT });
}

/**
 * A config file's text: JSON text (configs written by programs) through JSON.parse, which reads it as the
 * YAML parser does in a fraction of its time (~3 ms of a short run's start, bench/lean.ts); everything
 * else as YAML 1.1. One difference: a repeated key keeps its last value there, as in PyYAML (the YAML
 * parser refuses one).
 */
export function parseConfigText(text: string): unknown {
  if (/^\s*\{/.test(text)) {
    try {
      return JSON.parse(text);
    } catch {
      // Not JSON after all: YAML reads it (or says where it is wrong).
    }
  }
  // YAML 1.1, as PyYAML reads it (mini-swe-agent's configs quote 'off' for that reason).
  return parsePyYaml(text);
}

/** The build's readings of the built-in configs (scripts/bundle.mjs), by file name, with the text each read. */
let builtinReadings: Record<string, { text: string; data: unknown }> | undefined;

/**
 * A built-in config's data as the build read it, when the file still has the text the build read: the YAML
 * parser is then not needed at all (~4 ms of a short run's start, bench/lean.ts).
 */
function builtinReading(path: string, text: string): unknown {
  if (dirname(path) !== join(packageRoot(), "config")) return undefined;
  try {
    builtinReadings ??= JSON.parse(readFileSync(join(packageRoot(), BUILTIN_READINGS), "utf8"));
  } catch {
    builtinReadings = {};
  }
  const reading = builtinReadings?.[basename(path)];
  // A copy: the caller fills in template files.
  return reading?.text === text ? structuredClone(reading.data) : undefined;
}

/** Where the build writes its readings of the built-in configs, under the package root. */
export const BUILTIN_READINGS = "dist/src/builtin-configs.json";

/** Reads one YAML config file into a plain object; template values `{file: path}` are read from disk. */
export function readConfigFile(path: string): Record<string, unknown> {
  let data: unknown;
  try {
    const text = readUtf8File(path);
    data = builtinReading(path, text) ?? parseConfigText(text);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    if (error instanceof YAMLParseError) {
      const where = error.linePos?.[0] ? `line ${error.linePos[0].line}, column ${error.linePos[0].col}` : "";
      const reason = error.message.split("\n")[0]?.replace(/ at line \d+, column \d+:?$/, "") ?? "";
      throw new ConfigError(`${path}: ${where ? `${where}: ` : ""}malformed YAML: ${reason}`);
    }
    if (error instanceof ReferenceError) {
      // The alias limit (and unresolvable aliases): "Excessive alias count indicates a resource exhaustion attack".
      throw new ConfigError(`${path}: malformed YAML: ${error.message}`);
    }
    throw new ConfigError(`${path}: cannot read: ${(error as Error).message}`);
  }
  if (data === null || data === undefined) return {};
  if (!isPlainObject(data))
    throw new ConfigError(`${path}: expected a mapping with agent/environment/model/run`);
  resolveTemplateFiles(data, path, "");
  if (isPlainObject(data.run) && typeof data.run.setup_dir === "string") {
    data.run.setup_dir = resolve(dirname(path), data.run.setup_dir);
  }
  return data;
}

function resolveTemplateFiles(node: Record<string, unknown>, file: string, prefix: string): void {
  for (const [key, value] of Object.entries(node)) {
    const keyPath = prefix ? `${prefix}.${key}` : key;
    if (!isPlainObject(value)) continue;
    if (key.endsWith("_template") && typeof value.file === "string" && Object.keys(value).length === 1) {
      const candidates = [resolve(dirname(file), value.file), join(packageRoot(), value.file)];
      const found = candidates.find((candidate) => existsSync(candidate));
      if (!found) throw new ConfigError(`${file}: ${keyPath}: template file not found: ${value.file}`);
      node[key] = readUtf8File(found);
    } else {
      resolveTemplateFiles(value, file, keyPath);
    }
  }
}
