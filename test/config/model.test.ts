import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { modelSchema } from "../../src/config/model.js";
import { UserError } from "../../src/errors.js";

const templates = { observation_template: "{{ output.output }}", format_error_template: "{{ error }}" };

beforeEach(() => {
  vi.stubEnv("SWERUN_GLOBAL_CONFIG_DIR", mkdtempSync(join(tmpdir(), "swerun-model-config-")));
  for (const name of [
    "SWERUN_COST_TRACKING",
    "MSWEA_COST_TRACKING",
    "SWERUN_MODEL_RETRY_ATTEMPTS",
    "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT",
    "LITELLM_MODEL_REGISTRY_PATH",
  ]) {
    vi.stubEnv(name, "");
  }
});
afterEach(() => vi.unstubAllEnvs());

describe("modelSchema", () => {
  it("has mini-swe-agent's defaults plus swerun's request settings", () => {
    expect(modelSchema.parse(templates)).toMatchObject({
      model_name: "",
      model_class: "openai",
      model_kwargs: {},
      cost_tracking: "default",
      litellm_model_registry: null,
      request_timeout: 600,
      retry_attempts: 10,
      retry_min_wait: 4,
      retry_max_wait: 60,
    });
    expect(modelSchema.parse(templates).set_cache_control).toBeUndefined();
  });

  it("reads its defaults from SWERUN_* variables, then MSWEA_* ones; the config wins", () => {
    vi.stubEnv("MSWEA_COST_TRACKING", "ignore_errors");
    vi.stubEnv("MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT", "4");
    vi.stubEnv("LITELLM_MODEL_REGISTRY_PATH", "/prices.json");
    expect(modelSchema.parse(templates)).toMatchObject({
      cost_tracking: "ignore_errors",
      retry_attempts: 4,
      litellm_model_registry: "/prices.json",
    });
    vi.stubEnv("SWERUN_MODEL_RETRY_ATTEMPTS", "2");
    expect(modelSchema.parse(templates).retry_attempts).toBe(2);
    expect(modelSchema.parse({ ...templates, retry_attempts: 7, cost_tracking: "default" })).toMatchObject({
      retry_attempts: 7,
      cost_tracking: "default",
    });
  });

  it("names the variable when its value is invalid", () => {
    vi.stubEnv("SWERUN_COST_TRACKING", "sometimes");
    expect(() => modelSchema.parse(templates)).toThrow(UserError);
    expect(() => modelSchema.parse(templates)).toThrow(
      'SWERUN_COST_TRACKING (from environment): expected default or ignore_errors, got "sometimes"',
    );
  });
});
