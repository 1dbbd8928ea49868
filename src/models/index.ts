import type { AgentEvent } from "../agent/events.js";
import { MODEL_CLASSES, type ModelConfig } from "../config/schema.js";
import type { Model } from "./model.js";

export interface ModelContext {
  /** Where the model reports retries and other events. */
  emit?: (event: AgentEvent) => void;
}

/** Builds the model a config names. The OpenAI client loads only when a real model is used. */
export async function createModel(config: ModelConfig, context: ModelContext = {}): Promise<Model> {
  const kind = MODEL_CLASSES[config.model_class];
  switch (kind) {
    case "deterministic": {
      const { DeterministicModel } = await import("./deterministic.js");
      return new DeterministicModel(config);
    }
    case "deterministic_toolcall": {
      const { DeterministicToolcallModel } = await import("./deterministic-toolcall.js");
      return new DeterministicToolcallModel(config);
    }
    case "openai":
    case "openai_textbased": {
      const { OpenAIModel } = await import("./openai.js");
      return OpenAIModel.create(config, { ...context, textBased: kind === "openai_textbased" });
    }
  }
}
