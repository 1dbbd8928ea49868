import { UserError } from "../errors.js";
import {
  formatErrorTemplate,
  MODEL_CLASS_PATHS,
  MODEL_CLASSES,
  type ModelConfig,
  modelSchema,
} from "./model.js";

/** Model classes whose calls go to sub-models (mini-swe-agent's RouletteModel, InterleavingModel). */
export function isMetaModelClass(modelClass: unknown): modelClass is "roulette" | "interleaving" {
  return modelClass === "roulette" || modelClass === "interleaving";
}

/**
 * mini-swe-agent writes a meta model's sub-model configs as a list under `model_kwargs`; swerun keeps them
 * in `models` (so that `model_kwargs` stays what every other class sends with its requests).
 */
export function liftSubModels(model: Record<string, unknown>): void {
  if (isMetaModelClass(model.model_class) && Array.isArray(model.model_kwargs)) {
    model.models = model.model_kwargs;
    delete model.model_kwargs;
  }
}

/**
 * The sub-model configs of a roulette or interleaving config, each read as a model config of its own
 * (mini-swe-agent's class paths and short names alike); a bad one is a UserError naming
 * `model.model_kwargs.<index>.<field>`, as is a `sequence` index without its sub-model.
 */
export function subModelConfigs(config: ModelConfig, path = "model"): ModelConfig[] {
  const entries = config.models;
  if (!entries)
    throw new UserError(
      `${path}.model_kwargs: a list of model configs is required when model_class is ${config.model_class}`,
    );
  if (config.sequence && config.model_class !== "interleaving")
    throw new UserError(`${path}.sequence: only interleaving models take a sequence`);
  for (const [position, index] of (config.sequence ?? []).entries()) {
    if (index >= entries.length)
      throw new UserError(
        `${path}.sequence.${position}: ${index} names no sub-model (there are ${entries.length})`,
      );
  }
  return entries.map((entry, index) => subModelConfig(entry, `${path}.model_kwargs.${index}`));
}

function subModelConfig(entry: Record<string, unknown>, path: string): ModelConfig {
  const raw = structuredClone(entry);
  if (typeof raw.model_class === "string")
    raw.model_class = MODEL_CLASS_PATHS[raw.model_class] ?? raw.model_class;
  if (raw.model_class !== undefined && !(String(raw.model_class) in MODEL_CLASSES)) {
    throw new UserError(
      `${path}.model_class: "${String(entry.model_class)}" is not supported (supported: ${Object.keys(MODEL_CLASSES).join(", ")})`,
    );
  }
  liftSubModels(raw);
  const parsed = modelSchema.safeParse(raw, { jitless: true });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = [path, ...(issue?.path ?? []).map(String)].join(".");
    if (issue?.code === "unrecognized_keys") {
      const keys = issue.keys.map((key) => `${where}.${key}`).join(", ");
      throw new UserError(`${keys}: unknown key${issue.keys.length > 1 ? "s" : ""}`);
    }
    throw new UserError(`${where}: ${issue?.message ?? "invalid model config"}`);
  }
  const config = parsed.data;
  config.format_error_template = formatErrorTemplate(config);
  if (MODEL_CLASSES[config.model_class].startsWith("deterministic") && !config.outputs)
    throw new UserError(`${path}.outputs: required when model_class is ${config.model_class}`);
  if (isMetaModelClass(config.model_class)) subModelConfigs(config, path);
  return config;
}

/** A config and, for a meta model, its sub-models' configs at every depth. */
export function everyModelConfig(config: ModelConfig): ModelConfig[] {
  if (!isMetaModelClass(config.model_class)) return [config];
  return [config, ...subModelConfigs(config).flatMap(everyModelConfig)];
}
