import * as z from "zod/mini";
import { UserError } from "../errors.js";
import { pythonRegex } from "../python/regex.js";
import { lookupSetting } from "./keys.js";

/** Model classes swerun implements, with mini-swe-agent's short names as aliases. */
export const MODEL_CLASSES = {
  openai: "openai",
  openai_textbased: "openai_textbased",
  litellm: "openai",
  litellm_textbased: "openai_textbased",
  openrouter: "openai",
  openrouter_textbased: "openai_textbased",
  portkey: "openai",
  requesty: "openai",
  responses: "responses",
  litellm_response: "responses",
  openrouter_response: "responses",
  portkey_response: "responses",
  deterministic: "deterministic",
  deterministic_toolcall: "deterministic_toolcall",
  deterministic_response_api_toolcall: "deterministic_responses",
  roulette: "roulette",
  interleaving: "interleaving",
} as const;

/** mini-swe-agent's class paths, read as the short name of the swerun class that does the same. */
export const MODEL_CLASS_PATHS: Record<string, keyof typeof MODEL_CLASSES> = {
  "minisweagent.models.litellm_model.LitellmModel": "litellm",
  "minisweagent.models.litellm_textbased_model.LitellmTextbasedModel": "litellm_textbased",
  "minisweagent.models.openrouter_model.OpenRouterModel": "openrouter",
  "minisweagent.models.openrouter_textbased_model.OpenRouterTextbasedModel": "openrouter_textbased",
  "minisweagent.models.litellm_response_model.LitellmResponseModel": "litellm_response",
  "minisweagent.models.openrouter_response_model.OpenRouterResponseModel": "openrouter_response",
  "minisweagent.models.portkey_model.PortkeyModel": "portkey",
  "minisweagent.models.portkey_response_model.PortkeyResponseAPIModel": "portkey_response",
  "minisweagent.models.requesty_model.RequestyModel": "requesty",
  "minisweagent.models.test_models.DeterministicModel": "deterministic",
  "minisweagent.models.test_models.DeterministicToolcallModel": "deterministic_toolcall",
  "minisweagent.models.test_models.DeterministicResponseAPIToolcallModel":
    "deterministic_response_api_toolcall",
  "minisweagent.models.extra.roulette.RouletteModel": "roulette",
  "minisweagent.models.extra.roulette.InterleavingModel": "interleaving",
};

/**
 * The name a run's outputs give its model (preds.json's `model_name_or_path`, run.json, the batch folder):
 * its `model_name`, else its `model_class`; "" when it has neither. Takes a model config or one read back
 * from a trajectory.
 */
export function modelDisplayName(model: { model_name?: unknown; model_class?: unknown } | undefined): string {
  return String(model?.model_name || model?.model_class || "");
}

/** mini-swe-agent's default `observation_template` (every model class has it). */
export const DEFAULT_OBSERVATION_TEMPLATE =
  "{% if output.exception_info %}<exception>{{output.exception_info}}</exception>\n{% endif %}" +
  "<returncode>{{output.returncode}}</returncode>\n<output>\n{{output.output}}</output>";

/** mini-swe-agent's default `format_error_template`: the error itself; text-based models say how many actions they found. */
export function defaultFormatErrorTemplate(modelClass: keyof typeof MODEL_CLASSES): string {
  return MODEL_CLASSES[modelClass] === "openai_textbased"
    ? "Please always provide EXACTLY ONE action in triple backticks, found {{actions|length}} actions."
    : "{{ error }}";
}

/** The format-error template a model uses: the config's, else its class's default. */
export function formatErrorTemplate(config: ModelConfig): string {
  return config.format_error_template ?? defaultFormatErrorTemplate(config.model_class);
}

/**
 * A default read from a setting (the environment, `.env`, or the global config file), as mini-swe-agent
 * reads `MSWEA_*` variables for its defaults; an invalid value names the variable and where it was set.
 */
function settingDefault<T>(
  names: string[],
  parse: (raw: string) => T | undefined,
  expected: string,
  fallback: T,
) {
  return (): T => {
    const setting = lookupSetting(names);
    if (!setting) return fallback;
    const value = parse(setting.value);
    if (value === undefined) {
      throw new UserError(
        `${setting.name} (from ${setting.source}): expected ${expected}, got "${setting.value}"`,
      );
    }
    return value;
  };
}

const COST_TRACKING = ["default", "ignore_errors"] as const;
const costTrackingDefault = settingDefault(
  ["SWERUN_COST_TRACKING", "MSWEA_COST_TRACKING"],
  (raw) => COST_TRACKING.find((mode) => mode === raw),
  COST_TRACKING.join(" or "),
  "default" as (typeof COST_TRACKING)[number],
);
const retryAttemptsDefault = settingDefault(
  ["SWERUN_MODEL_RETRY_ATTEMPTS", "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT"],
  (raw) => (/^\s*\d+\s*$/.test(raw) && Number(raw) >= 1 ? Number(raw) : undefined),
  "a whole number >= 1",
  10,
);
const registryDefault = settingDefault(
  ["LITELLM_MODEL_REGISTRY_PATH"],
  (raw) => raw,
  "a path",
  null as string | null,
);

export const modelSchema = z.strictObject({
  /** Model name, `provider/model` as in litellm (e.g. anthropic/claude-sonnet-4-5); a bare name is an OpenAI model. */
  model_name: z._default(z.string(), ""),
  /**
   * openai (tool calls, default), openai_textbased (regex-parsed text actions), responses (OpenAI's Responses
   * API), deterministic (scripted); mini-swe-agent's class names are aliases (see MODEL_CLASSES).
   */
  model_class: z._default(z.enum(Object.keys(MODEL_CLASSES) as [keyof typeof MODEL_CLASSES]), "openai"),
  /**
   * Passed through to the request (temperature, max_tokens, top_p, reasoning_effort, ...). Not sent:
   * api_base/base_url and api_key (the endpoint), extra_headers (HTTP headers), extra_body (merged into the
   * request), timeout (litellm's name for request_timeout), and litellm-only drop_params/num_retries.
   */
  model_kwargs: z._default(z.record(z.string(), z.unknown()), {}),
  /** Renders each action's output for the model; `output` holds output, returncode, exception_info (and `extra` after an exception). */
  observation_template: z._default(z.string(), DEFAULT_OBSERVATION_TEMPLATE),
  /** Renders the feedback after a malformed response (`error`, `actions`, `finish_reason`; `has_tool_calls` with tool calls). Default: the class's, see `defaultFormatErrorTemplate`. */
  format_error_template: z.optional(z.string()),
  /** Text-based models: the regex whose first group is a command; exactly one match is required. */
  action_regex: z._default(z.string(), "```mswea_bash_command\\s*\\n(.*?)\\n```"),
  /** default: an unknown price is an error; ignore_errors: cost 0 and go on. Default from SWERUN_COST_TRACKING. */
  cost_tracking: z._default(z.enum(COST_TRACKING), costTrackingDefault),
  /** A LiteLLM-format price file that takes precedence over the built-in prices. Default from LITELLM_MODEL_REGISTRY_PATH. */
  litellm_model_registry: z._default(z.nullable(z.string()), registryDefault),
  /** Anthropic prompt caching: mark the last message for caching (default_end) or not (null); unset = on for Claude models. */
  set_cache_control: z.optional(z.nullable(z.enum(["default_end"]))),
  /** Seconds one model request may take before it is abandoned and retried. */
  request_timeout: z._default(z.number().check(z.positive()), 600),
  /** Attempts per model call, the first included. Default from SWERUN_MODEL_RETRY_ATTEMPTS, else 10. */
  retry_attempts: z._default(z.int().check(z.minimum(1)), retryAttemptsDefault),
  /** Shortest and longest wait between attempts in seconds; a server's Retry-After is honoured (up to 600 s). */
  retry_min_wait: z._default(z.number().check(z.minimum(0)), 4),
  retry_max_wait: z._default(z.number().check(z.minimum(0)), 60),
  /** Scripted models: the assistant messages returned in order, as written (`extra.actions` are the commands run). */
  outputs: z.optional(z.array(z.record(z.string(), z.unknown()))),
  /**
   * A Python regex whose matches in prompts, observations and error exits become content parts (its first
   * group the type, `image_url`; its second the URL), as mini-swe-agent's `multimodal_regex`; every such
   * message's content is then a list of parts. Empty (default): off. See models/multimodal.ts.
   */
  multimodal_regex: z._default(z.string(), "").check(
    z.superRefine((pattern, context) => {
      try {
        pythonRegex(pattern);
      } catch (error) {
        context.addIssue({ code: "custom", message: `not a usable regex: ${(error as Error).message}` });
      }
    }),
  ),
  /**
   * Portkey (`model_class: portkey`): the provider behind the gateway (`openai`, `anthropic`, ...), sent as
   * `x-portkey-provider` unless PORTKEY_VIRTUAL_KEY is set, and used to price the model; as mini-swe-agent's.
   */
  provider: z.optional(z.string()),
  /** Scripted models: what each call adds to the process-wide cost (the global limits); a message's own cost is its `extra.cost`. */
  cost_per_call: z._default(z.number().check(z.minimum(0)), 1),
  /**
   * roulette and interleaving (mini-swe-agent's RouletteModel, InterleavingModel): the sub-models' configs,
   * written as mini writes them, a list under `model_kwargs` (read into this field when the config loads).
   */
  models: z.optional(z.array(z.record(z.string(), z.unknown())).check(z.minLength(1))),
  /** interleaving: the sub-model (by index) of each call in turn, repeated; unset: each sub-model in turn. */
  sequence: z.optional(z.nullable(z.array(z.int().check(z.minimum(0))).check(z.minLength(1)))),
});

export type ModelConfig = z.output<typeof modelSchema>;
