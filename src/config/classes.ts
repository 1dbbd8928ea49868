// The classes a config names (environment, model, agent): their names and aliases, the keys each environment
// class has, and a merged config's class names checked and made swerun's.

import { ConfigError } from "./config-error.js";
import { KUBERNETES_REFUSED_KEYS } from "./kubernetes.js";
import { isPlainObject, originOf } from "./merge.js";
import { liftSubModels } from "./meta-model.js";
import { MODEL_CLASS_PATHS, MODEL_CLASSES, UNSUPPORTED_KEYS } from "./schema.js";

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

export function checkUnsupported(data: Record<string, unknown>, origin: string): void {
  for (const [section, value] of Object.entries(data)) {
    if (!isPlainObject(value)) continue;
    for (const key of Object.keys(value)) {
      const reason = UNSUPPORTED_KEYS[`${section}.${key}`];
      if (reason && !(section === "environment" && DOCKER_KEYS.includes(key)))
        throw new ConfigError(`${origin}: ${section}.${key} ${reason}`);
    }
  }
}

export function normalizeClasses(config: Record<string, unknown>, provenance: Map<string, string>): void {
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
