import type * as z from "zod/mini";
import { registerCredential, registerCredentialEntries } from "../util/secrets.js";
import { checkUnsupported, normalizeClasses } from "./classes.js";
import { englishMessages } from "./common.js";
import { ConfigError } from "./config-error.js";
import { findConfigFile, readConfigFile } from "./config-file.js";
import { isPlainObject, mergeInto, originOf } from "./merge.js";
import { everyModelConfig, isMetaModelClass, subModelConfigs } from "./meta-model.js";
import {
  configSchema,
  formatErrorTemplate,
  MODEL_CLASSES,
  type ModelConfig,
  type SwerunConfig,
} from "./schema.js";

/** A value set from the command line, e.g. `--cost-limit 2` → { path: "agent.cost_limit", value: 2 }. */
export interface ConfigOverride {
  path: string;
  value: unknown;
  /** How the user set it, for error messages (e.g. "--cost-limit"). */
  origin: string;
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
