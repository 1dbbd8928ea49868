import { subModelConfigs } from "../config/meta-model.js";
import type { ModelConfig } from "../config/schema.js";
import type { ExecOutput, Message } from "../messages.js";
import { withoutSecrets } from "../util/sanitize.js";
import type { Model, QueryOptions } from "./model.js";
import { MODEL_TYPES } from "./model-types.js";

/** Builds one sub-model (createModel, handed in so that this module does not import the factory). */
export type SubModelFactory = (config: ModelConfig) => Promise<Model>;

/**
 * mini-swe-agent's RouletteModel (`model_class: roulette`) and InterleavingModel (`interleaving`): each call
 * goes to one sub-model, built from the configs listed under `model_kwargs`: a random one (roulette), or the
 * next of `sequence` (interleaving; unset: each sub-model in turn). The answer is recorded with the
 * sub-model's name as `model_name`, and its cost is the sub-model's.
 *
 * mini-swe-agent 2.4.6's classes lack the prompt and observation formatting its agent calls (a run stops
 * with AttributeError before the first call); here prompts are formatted by the first sub-model and each
 * step's observations by the sub-model that answered it (a text model's as user messages, a tool-call
 * model's as tool messages).
 */
export class MetaModel implements Model {
  readonly name: string;
  readonly #config: ModelConfig;
  readonly #models: Model[];
  readonly #random: () => number;
  /** The sub-model that answered each assistant message, for its observations. */
  readonly #answeredBy = new WeakMap<Message, Model>();
  #calls = 0;

  private constructor(config: ModelConfig, models: Model[], random: () => number) {
    this.#config = config;
    this.#models = models;
    this.#random = random;
    this.name = config.model_name || config.model_class;
  }

  static async create(
    config: ModelConfig,
    build: SubModelFactory,
    random: () => number = Math.random,
  ): Promise<MetaModel> {
    const models: Model[] = [];
    for (const sub of subModelConfigs(config)) models.push(await build(sub));
    return new MetaModel(config, models, random);
  }

  #select(): Model {
    const count = this.#models.length;
    let index: number;
    if (this.#config.model_class === "roulette")
      index = Math.min(count - 1, Math.floor(this.#random() * count));
    else {
      const sequence = this.#config.sequence;
      index = sequence ? (sequence[this.#calls % sequence.length] ?? 0) : this.#calls % count;
    }
    return this.#models[index] as Model;
  }

  async query(messages: Message[], options?: QueryOptions): Promise<Message> {
    const model = this.#select();
    this.#calls += 1;
    const message = await model.query(messages, options);
    message.model_name = model.name;
    this.#answeredBy.set(message, model);
    return message;
  }

  formatObservations(
    message: Message,
    outputs: ExecOutput[],
    templateVars: Record<string, unknown>,
  ): Message[] {
    const model = this.#answeredBy.get(message) ?? (this.#models[0] as Model);
    return model.formatObservations(message, outputs, templateVars);
  }

  formatMessage(message: Message): Message {
    const first = this.#models[0] as Model;
    return first.formatMessage ? first.formatMessage(message) : message;
  }

  /** mini-swe-agent's config dump: the sub-model configs as written, (interleaving) the sequence, the name. */
  #publicConfig(): Record<string, unknown> {
    const config = this.#config;
    return {
      model_kwargs: withoutSecrets(config.models ?? []),
      ...(config.model_class === "interleaving" ? { sequence: config.sequence ?? null } : {}),
      model_name: this.name,
    };
  }

  templateVars(): Record<string, unknown> {
    return this.#publicConfig();
  }

  serialize() {
    return { model: this.#publicConfig(), model_type: MODEL_TYPES[this.#config.model_class] };
  }
}
