import { bubblewrapEnvironmentSchema } from "../config/bubblewrap.js";
import { dropOtherClassKeys, environmentClassName, unsupportedEnvironmentClass } from "../config/classes.js";
import { englishMessages } from "../config/common.js";
import { ConfigError } from "../config/config-error.js";
import { findConfigFile, readConfigFile } from "../config/config-file.js";
import { dockerEnvironmentSchema } from "../config/docker.js";
import { type ConfigOverride, parseKeyValueSpec } from "../config/load.js";
import { isPlainObject, mergeInto, originOf } from "../config/merge.js";
import { type EnvironmentConfig, environmentSchema, localEnvironmentSchema } from "../config/schema.js";
import { UserError } from "../errors.js";
import type { LoadedTrajectory } from "../trajectory/reader.js";

const CLASS_SHAPES: Record<string, Set<string>> = {
  local: new Set(Object.keys(localEnvironmentSchema.shape)),
  docker: new Set(Object.keys(dockerEnvironmentSchema.shape)),
  bubblewrap: new Set(Object.keys(bubblewrapEnvironmentSchema.shape)),
};

/** Recorded keys a replay leaves out: keep_container was a choice of that run (a replay decides its own). */
const NOT_REPLAYED = new Set(["keep_container"]);

/** The environment section of the recorded config, as a swerun environment config (before validation). */
export interface RecordedEnvironment {
  environment: Record<string, unknown>;
  /** Recorded keys swerun's environment of that class does not have (left out). */
  dropped: string[];
  /** The recorded environment type that swerun cannot recreate, when no class could be derived. */
  unknownType?: string;
}

/** Which environment class a recorded config describes: its environment_class, else its environment_type. */
function recordedClass(environment: Record<string, unknown>, type: unknown): string | undefined {
  const explicit = environmentClassName(environment.environment_class);
  if (explicit) return explicit;
  if (typeof type !== "string") return undefined;
  if (/bubblewrap/i.test(type)) return "bubblewrap";
  if (/docker/i.test(type)) return "docker";
  if (/local/i.test(type)) return "local";
  return undefined;
}

export function recordedEnvironment(trajectory: LoadedTrajectory): RecordedEnvironment {
  const config = isPlainObject(trajectory.info.config) ? trajectory.info.config : {};
  const recorded = isPlainObject(config.environment) ? config.environment : {};
  const type = config.environment_type;
  const environmentClass = recordedClass(recorded, type);
  const environment: Record<string, unknown> = {};
  const dropped: string[] = [];
  if (environmentClass) environment.environment_class = environmentClass;
  const shape = CLASS_SHAPES[environmentClass ?? "docker"] ?? new Set<string>();
  for (const [key, value] of Object.entries(recorded)) {
    if (key === "environment_class" || value === null || value === undefined || NOT_REPLAYED.has(key))
      continue;
    if (shape.has(key)) environment[key] = value;
    else dropped.push(key);
  }
  const unknownType = !environmentClass && typeof type === "string" ? type : undefined;
  return { environment, dropped, ...(unknownType ? { unknownType } : {}) };
}

/** Whether a `-c` spec is an `environment.*` key=value (taken out of the agent/model config and layered here). */
export function isEnvironmentSpec(spec: string): boolean {
  const kv = parseKeyValueSpec(spec);
  return Boolean(kv && (kv.path === "environment" || kv.path.startsWith("environment.")));
}

function setPath(path: string, value: unknown): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let node = root;
  const parts = path.split(".");
  for (const part of parts.slice(0, -1)) {
    const child: Record<string, unknown> = {};
    node[part] = child;
    node = child;
  }
  node[parts.at(-1) ?? path] = value;
  return root;
}

export interface ReplayEnvironment {
  environment: EnvironmentConfig;
  /** What the user should know about how the recorded environment was used. */
  notes: string[];
  /** The cwd the recorded run used ("" when not recorded). */
  recordedCwd: string;
}

/** The environment sections of the `-c` specs and the flags, merged in order into `merged`. */
function mergeLayers(
  merged: Record<string, unknown>,
  specs: string[],
  flags: ConfigOverride[],
  provenance: Map<string, string>,
): void {
  for (const spec of specs) {
    const kv = parseKeyValueSpec(spec);
    if (kv) {
      if (isEnvironmentSpec(spec)) mergeInto(merged, setPath(kv.path, kv.value), kv.origin, provenance);
      continue;
    }
    const path = findConfigFile(spec);
    const data = readConfigFile(path);
    if (isPlainObject(data.environment))
      mergeInto(merged, { environment: data.environment }, path, provenance);
  }
  for (const flag of flags) {
    if (flag.value !== undefined) mergeInto(merged, setPath(flag.path, flag.value), flag.origin, provenance);
  }
}

/**
 * The environment class the merged layers ask for (local when none does, unless the recorded run used one
 * swerun cannot recreate), by its class name; a class swerun does not have is a ConfigError naming its origin.
 */
function environmentClassOf(
  environment: Record<string, unknown>,
  unknownType: string | undefined,
  trajectoryPath: string,
  provenance: Map<string, string>,
): string {
  if (environment.environment_class === undefined) {
    if (unknownType) {
      throw new UserError(
        `${trajectoryPath}: the recorded run used ${unknownType}, which swerun cannot recreate: choose an environment with --environment-class local, docker or bubblewrap`,
      );
    }
    environment.environment_class = "local";
  }
  const given = environment.environment_class;
  const environmentClass = environmentClassName(given);
  if (!environmentClass) {
    const origin = originOf("environment.environment_class", provenance) ?? "config";
    throw unsupportedEnvironmentClass(given, origin);
  }
  return environmentClass;
}

/** The merged environment, validated; the first problem is a ConfigError naming the layer it came from. */
function validEnvironment(
  environment: Record<string, unknown>,
  provenance: Map<string, string>,
): EnvironmentConfig {
  const result = environmentSchema.safeParse(environment, { error: englishMessages() });
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = ["environment", ...(issue?.path ?? []).map(String)].join(".");
  const keys = issue?.code === "unrecognized_keys" ? issue.keys.map((key) => `${path}.${key}`) : [];
  const origin = originOf(keys[0] ?? path, provenance) ?? "config";
  const what =
    keys.length > 0
      ? `${keys.join(", ")}: unknown key${keys.length > 1 ? "s" : ""}`
      : `${path}: ${issue?.message ?? "invalid"}`;
  throw new ConfigError(`${origin}: ${what}`);
}

/**
 * The replay's environment: the recorded `info.config.environment`, then the environment sections of
 * the `-c` specs in order (files, built-in names, `environment.*=value`), then `flags`. When a later
 * layer changes the environment class, recorded keys that class does not have are left out.
 */
export function replayEnvironment(
  trajectory: LoadedTrajectory,
  specs: string[],
  flags: ConfigOverride[],
): ReplayEnvironment {
  const recorded = recordedEnvironment(trajectory);
  const recordedOrigin = `${trajectory.path} (info.config.environment)`;
  const merged: Record<string, unknown> = {};
  const provenance = new Map<string, string>();
  mergeInto(merged, { environment: recorded.environment }, recordedOrigin, provenance);
  mergeLayers(merged, specs, flags, provenance);
  const environment = merged.environment as Record<string, unknown>;
  const environmentClass = environmentClassOf(environment, recorded.unknownType, trajectory.path, provenance);
  environment.environment_class = environmentClass;
  dropOtherClassKeys(environment, environmentClass);
  const notes: string[] = [];
  if (recorded.dropped.length > 0)
    notes.push(`recorded environment keys swerun does not use: ${recorded.dropped.join(", ")}`);
  const shape = CLASS_SHAPES[environmentClass] ?? new Set<string>();
  for (const key of Object.keys(environment)) {
    if (!shape.has(key) && provenance.get(`environment.${key}`) === recordedOrigin) delete environment[key];
  }
  const recordedCwd = typeof recorded.environment.cwd === "string" ? recorded.environment.cwd : "";
  return { environment: validEnvironment(environment, provenance), notes, recordedCwd };
}
