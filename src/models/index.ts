import { MODEL_CLASSES, type ModelConfig } from "../config/schema.js";
import type { AgentEvent } from "../events.js";
import { withoutSecrets } from "../util/sanitize.js";
import { globalModelStats } from "./global-stats.js";
import type { Model } from "./model.js";
import { MODEL_TYPES } from "./model-types.js";

export { MODEL_TYPES };

/** What a model of this config would record, for a run that ended before its model existed. */
export function serializeModelConfig(config: ModelConfig): {
  model: Record<string, unknown>;
  model_type: string;
} {
  const { outputs: _outputs, ...model } = withoutSecrets(config);
  return { model, model_type: MODEL_TYPES[config.model_class] };
}

export interface ModelContext {
  /** Where the model reports retries and other events. */
  emit?: (event: AgentEvent) => void;
  /** Roulette models: the random draw in [0, 1) of each call (default Math.random). */
  random?: () => number;
}

/** Builds the model a config names. The OpenAI client loads only when a real model is used. */
export async function createModel(config: ModelConfig, context: ModelContext = {}): Promise<Model> {
  // Reads (and checks) the global limits now: a bad SWERUN_GLOBAL_* value stops the run before any call.
  globalModelStats();
  const kind = MODEL_CLASSES[config.model_class];
  switch (kind) {
    case "deterministic": {
      const { DeterministicModel } = await import("./deterministic.js");
      return new DeterministicModel(config);
    }
    case "deterministic_responses": {
      const { DeterministicResponsesModel } = await import("./deterministic-responses.js");
      return new DeterministicResponsesModel(config);
    }
    case "deterministic_toolcall": {
      const { DeterministicToolcallModel } = await import("./deterministic-toolcall.js");
      return new DeterministicToolcallModel(config);
    }
    case "openai":
    case "openai_textbased": {
      const { chatModel } = await import("./chat-models.js");
      const model = await chatModel(config, { ...context, textBased: kind === "openai_textbased" });
      await model.checkPrice(); // a model without a price is refused before its first (paid) call
      return model;
    }
    case "roulette":
    case "interleaving": {
      const { MetaModel } = await import("./meta-model.js");
      return MetaModel.create(config, (sub) => createModel(sub, context), context.random);
    }
    case "responses": {
      const { responsesModel } = await import("./chat-models.js");
      const model = await responsesModel(config, context);
      await model.checkPrice(); // a model without a price is refused before its first (paid) call
      return model;
    }
  }
}
