import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { parseDocument, visit, YAMLParseError } from "yaml";
import type * as z from "zod/mini";
import { UserError } from "../errors.js";
import { packageRoot } from "../util/package-root.js";
import { registerCredential, registerCredentialEntries } from "../util/secrets.js";
import { decodeUtf8 } from "../util/utf8.js";
import { englishMessages } from "./common.js";
import { KUBERNETES_REFUSED_KEYS } from "./kubernetes.js";
import { isPlainObject, mergeInto, originOf } from "./merge.js";
import { everyModelConfig, isMetaModelClass, liftSubModels, subModelConfigs } from "./meta-model.js";
import {
  configSchema,
  formatErrorTemplate,
  MODEL_CLASS_PATHS,
  MODEL_CLASSES,
  type ModelConfig,
  type SwerunConfig,
  UNSUPPORTED_KEYS,
} from "./schema.js";

/** A bad config: one line naming the file (or flag) and the key path. Exit code 2. */
export class ConfigError extends UserError {}

/** A value set from the command line, e.g. `--cost-limit 2` → { path: "agent.cost_limit", value: 2 }. */
export interface ConfigOverride {
  path: string;
  value: unknown;
  /** How the user set it, for error messages (e.g. "--cost-limit"). */
  origin: string;
}

const ENVIRONMENT_CLASS_ALIASES: Record<string, string> = {
  local: "local",
  docker: "docker",
  bubblewrap: "bubblewrap",
  kubernetes: "kubernetes",
  "minisweagent.environments.local.LocalEnvironment": "local",
  "minisweagent.environments.docker.DockerEnvironment": "docker",
  "minisweagent.environments.extra.bubblewrap.BubblewrapEnvironment": "bubblewrap",
};

/** mini-swe-agent's environment classes that swerun does not run (short names and class paths), and what they run on. */
const REFUSED_ENVIRONMENT_CLASSES: Record<string, string> = {
  singularity: "Singularity/Apptainer",
  swerex_docker: "SWE-ReX in Docker",
  swerex_modal: "SWE-ReX on Modal",
  contree: "ConTree",
  "minisweagent.environments.singularity.SingularityEnvironment": "Singularity/Apptainer",
  "minisweagent.environments.extra.swerex_docker.SwerexDockerEnvironment": "SWE-ReX in Docker",
  "minisweagent.environments.extra.swerex_modal.SwerexModalEnvironment": "SWE-ReX on Modal",
  "minisweagent.environments.extra.contree.ContreeEnvironment": "ConTree",
};

/** swerun's name of an environment class given by short name or mini-swe-agent class path; undefined when it has none. */
export function environmentClassName(value: unknown): string | undefined {
  return typeof value === "string" ? ENVIRONMENT_CLASS_ALIASES[value] : undefined;
}

/**
 * The one-line error for an environment class swerun does not have: mini-swe-agent's classes that cannot
 * run here say what to use instead; any other name lists the supported ones.
 */
export function unsupportedEnvironmentClass(value: unknown, origin: string): ConfigError {
  const supported = [...new Set(Object.values(ENVIRONMENT_CLASS_ALIASES))];
  const refused = typeof value === "string" ? REFUSED_ENVIRONMENT_CLASSES[value] : undefined;
  const field = `${origin}: environment.environment_class: "${String(value)}"`;
  if (!refused) return new ConfigError(`${field} is not supported (supported: ${supported.join(", ")})`);
  const instead = supported.filter((name) => name !== "local");
  const choices = `${instead.slice(0, -1).join(", ")}${instead.length > 1 ? " or " : ""}${instead.at(-1)}`;
  return new ConfigError(`${field} (mini-swe-agent's ${refused}) does not run in swerun: use ${choices}`);
}

const AGENT_CLASS_ALIASES: Record<string, "default" | "interactive"> = {
  default: "default",
  interactive: "interactive",
  "minisweagent.agents.default.DefaultAgent": "default",
  "minisweagent.agents.interactive.InteractiveAgent": "interactive",
  "minisweagent.run.benchmarks.utils.common.ProgressTrackingAgent": "default",
};

/**
 * Keys that only some environment classes have. Another class drops them, as mini-swe-agent's config classes
 * drop unknown keys, so a config written for Docker runs locally or under bubblewrap unchanged.
 */
const CLASS_KEYS: Record<string, string[]> = {
  docker: [
    "interpreter",
    "image",
    "forward_env",
    "executable",
    "run_args",
    "container_timeout",
    "pull_timeout",
    "container_options",
    "keep_container",
    "allow_privileged",
    "exec_mode",
  ],
  local: ["local_interpreter"],
  bubblewrap: ["executable", "wrapper_args", "forward_env"],
};
// Kubernetes keeps every Docker key: those it shares are its own, the others are refused with a reason
// (KUBERNETES_REFUSED_KEYS) rather than dropped.
CLASS_KEYS.kubernetes = [...(CLASS_KEYS.docker ?? [])];

/** Keys of mini-swe-agent's Docker environment: refused ones among them are refused only for docker. */
const DOCKER_KEYS = CLASS_KEYS.docker ?? [];

/**
 * Removes the keys of the other environment classes, which this class ignores: Docker's keys (`image`,
 * `interpreter`, ...) for local, as mini-swe-agent does, local's own `local_interpreter` for Docker, ...
 */
export function dropOtherClassKeys(environment: Record<string, unknown>, environmentClass: string): void {
  const own = new Set(CLASS_KEYS[environmentClass]);
  for (const [name, keys] of Object.entries(CLASS_KEYS)) {
    if (name === environmentClass) continue;
    for (const key of keys) if (!own.has(key)) delete environment[key];
  }
}

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

/** `a.b.c=value` specs: the value is parsed as JSON when it parses, else kept as a string. */
export function parseKeyValueSpec(spec: string): ConfigOverride | undefined {
  const match = /^([A-Za-z_][\w-]*(?:\.[\w-]+)*)=([\s\S]*)$/.exec(spec);
  if (!match) return undefined;
  const [, path = "", raw = ""] = match;
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    // not JSON: keep the string
  }
  return { path, value, origin: `-c ${spec}` };
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const parts = path.split(".");
  const root: Record<string, unknown> = {};
  let node = root;
  for (const part of parts.slice(0, -1)) {
    const child: Record<string, unknown> = {};
    node[part] = child;
    node = child;
  }
  node[parts[parts.length - 1] ?? path] = value;
  return Object.assign(target, root);
}

/** A config or template file's text; bytes that are not UTF-8 are refused (not turned into U+FFFD). */
function readUtf8File(path: string): string {
  return decodeUtf8(
    readFileSync(path),
    (offset, line) => new ConfigError(`${path}: not valid UTF-8 at byte offset ${offset} (line ${line})`),
  );
}

/**
 * YAML 1.1 as PyYAML reads it. One difference of the `yaml` package is undone: a block scalar (`|`, `>`)
 * that ends the file without a line break has no trailing newline in PyYAML (mini-swe-agent's shipped
 * `mini_textbased.yaml` ends that way, and the template is recorded in every trajectory).
 */
function parsePyYaml(text: string): unknown {
  const doc = parseDocument(text, { version: "1.1" });
  const [error] = doc.errors;
  if (error) throw error;
  if (!text.endsWith("\n") && !text.endsWith("\r")) {
    visit(doc, {
      Scalar(_key, node) {
        const block = node.type === "BLOCK_LITERAL" || node.type === "BLOCK_FOLDED";
        if (block && node.range?.[1] === text.length && typeof node.value === "string")
          node.value = node.value.replace(/\n$/, "");
      },
    });
  }
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

function checkUnsupported(data: Record<string, unknown>, origin: string): void {
  for (const [section, value] of Object.entries(data)) {
    if (!isPlainObject(value)) continue;
    for (const key of Object.keys(value)) {
      const reason = UNSUPPORTED_KEYS[`${section}.${key}`];
      if (reason && !(section === "environment" && DOCKER_KEYS.includes(key)))
        throw new ConfigError(`${origin}: ${section}.${key} ${reason}`);
    }
  }
}

function normalizeClasses(config: Record<string, unknown>, provenance: Map<string, string>): void {
  const environment = isPlainObject(config.environment) ? config.environment : {};
  config.environment = environment;
  const environmentClass = environment.environment_class ?? "local";
  const mapped = environmentClassName(environmentClass);
  if (!mapped) {
    const origin = originOf("environment.environment_class", provenance) ?? "config";
    throw unsupportedEnvironmentClass(environmentClass, origin);
  }
  environment.environment_class = mapped;
  dropOtherClassKeys(environment, mapped);
  if (mapped === "docker" || mapped === "kubernetes") {
    for (const key of Object.keys(environment)) {
      const reason =
        UNSUPPORTED_KEYS[`environment.${key}`] ??
        (mapped === "kubernetes" ? KUBERNETES_REFUSED_KEYS[key] : undefined);
      const origin = originOf(`environment.${key}`, provenance) ?? "config";
      if (reason) throw new ConfigError(`${origin}: environment.${key} ${reason}`);
    }
  }
  const model = isPlainObject(config.model) ? config.model : {};
  config.model = model;
  if (typeof model.model_class === "string") {
    const modelClass = MODEL_CLASS_PATHS[model.model_class] ?? model.model_class;
    if (!(modelClass in MODEL_CLASSES)) {
      const origin = originOf("model.model_class", provenance) ?? "config";
      throw new ConfigError(
        `${origin}: model.model_class: "${model.model_class}" is not supported (supported: ${Object.keys(MODEL_CLASSES).join(", ")})`,
      );
    }
    model.model_class = modelClass;
    liftSubModels(model);
  }
  const agent = isPlainObject(config.agent) ? config.agent : {};
  if (agent.agent_class !== undefined) {
    const agentClass =
      typeof agent.agent_class === "string" ? AGENT_CLASS_ALIASES[agent.agent_class] : undefined;
    if (!agentClass) {
      const origin = originOf("agent.agent_class", provenance) ?? "config";
      throw new ConfigError(
        `${origin}: agent.agent_class: "${String(agent.agent_class)}" is not supported (supported: ${Object.keys(AGENT_CLASS_ALIASES).join(", ")})`,
      );
    }
    agent.agent_class = agentClass;
  }
}

function formatIssue(issue: z.core.$ZodIssue, provenance: Map<string, string>): string {
  const path = issue.path.map(String).join(".");
  if (issue.code === "unrecognized_keys") {
    const keyPath = (key: string) => (path ? `${path}.${key}` : key);
    const first = issue.keys[0] ?? "";
    const origin = originOf(keyPath(first), provenance) ?? "config";
    return `${origin}: ${issue.keys.map(keyPath).join(", ")}: unknown key${issue.keys.length > 1 ? "s" : ""}`;
  }
  const origin = originOf(path, provenance);
  if (issue.code === "invalid_type" && !provenance.has(path)) {
    return `${path}: required, but no config sets it (given: ${[...new Set(provenance.values())].join(", ") || "none"})`;
  }
  return `${origin ?? "config"}: ${path}: ${issue.message}`;
}

/**
 * Loads and validates a config from `-c` specs (files, built-in names, `a.b=value`), then CLI overrides.
 * With no file or built-in name among the specs, the built-in `default` config is the base.
 */
export function loadConfig(
  specs: string[],
  overrides: ConfigOverride[] = [],
  base = "default",
): SwerunConfig {
  const merged: Record<string, unknown> = {};
  const provenance = new Map<string, string>();
  const keyValues = specs.map((spec) => ({ spec, kv: parseKeyValueSpec(spec) }));
  const files = keyValues.filter((entry) => !entry.kv);
  const sources: Array<{ origin: string; data: Record<string, unknown> }> = [];
  if (files.length === 0) {
    const path = findConfigFile(base);
    sources.push({ origin: path, data: readConfigFile(path) });
  }
  for (const { spec, kv } of keyValues) {
    if (kv) {
      sources.push({ origin: kv.origin, data: setPath({}, kv.path, kv.value) });
    } else {
      const path = findConfigFile(spec);
      sources.push({ origin: path, data: readConfigFile(path) });
    }
  }
  for (const override of overrides) {
    if (override.value === undefined) continue;
    sources.push({ origin: override.origin, data: setPath({}, override.path, override.value) });
  }
  for (const { origin, data } of sources) {
    checkUnsupported(data, origin);
    mergeInto(merged, data, origin, provenance);
  }
  normalizeClasses(merged, provenance);
  // Without the JIT fast path: one parse per run does not repay compiling it (new Function), ~3 ms of a start.
  const result = configSchema.safeParse(merged, { jitless: true, error: englishMessages() });
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new ConfigError(issue ? formatIssue(issue, provenance) : "invalid config");
  }
  const config = result.data;
  config.model.format_error_template = formatErrorTemplate(config.model);
  if (MODEL_CLASSES[config.model.model_class].startsWith("deterministic") && !config.model.outputs) {
    const origin = originOf("model.model_class", provenance) ?? "config";
    throw new ConfigError(
      `${origin}: model.outputs: required when model_class is ${config.model.model_class}`,
    );
  }
  checkSubModels(config.model, provenance);
  registerConfigCredentials(config);
  return config;
}

/** A roulette or interleaving config's sub-models are checked with the config, before any model is built. */
function checkSubModels(model: ModelConfig, provenance: Map<string, string>): void {
  if (!isMetaModelClass(model.model_class)) return;
  try {
    subModelConfigs(model);
  } catch (error) {
    const origin = originOf("model.model_kwargs", provenance) ?? originOf("model.model_class", provenance);
    throw new ConfigError(`${origin ?? "config"}: ${(error as Error).message}`);
  }
}

/**
 * Registers the credentials a config holds as secrets, before anything is printed or written:
 * model_kwargs.api_key, credential-looking extra_headers, and credential-looking environment.env values.
 */
function registerConfigCredentials(config: SwerunConfig): void {
  for (const model of everyModelConfig(config.model)) {
    const kwargs = model.model_kwargs;
    if (typeof kwargs.api_key === "string") registerCredential(kwargs.api_key);
    if (isPlainObject(kwargs.extra_headers)) registerCredentialEntries(kwargs.extra_headers);
  }
  registerCredentialEntries(config.environment.env);
}
