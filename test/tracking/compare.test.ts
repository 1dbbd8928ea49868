import { describe, expect, it } from "vitest";
import { configChanges } from "../../src/tracking/compare.js";
import { looseRun, type StoredRun } from "../../src/tracking/store.js";
import { registerSecret } from "../../src/util/secrets.js";

const run = (config: Record<string, unknown>): StoredRun => ({
  ...looseRun("/x", "r", {}),
  record: { config },
});

describe("runs compare's configuration changes", () => {
  it("are the resolved config's keys that differ, as dotted paths, old → new, credentials redacted", () => {
    registerSecret("sk-compare-secret-1234");
    const a = run({
      agent: { step_limit: 20, system_template: "You are a helpful assistant." },
      model: {
        model_name: "m",
        model_kwargs: { temperature: 0, extra_headers: { "X-Api-Token": "abc123456" } },
      },
    });
    const b = run({
      agent: { step_limit: 20, system_template: "You are a careful assistant." },
      model: {
        model_name: "m",
        model_kwargs: {
          temperature: 0.5,
          extra_headers: { "X-Api-Token": "zzz987654" },
          api_base: "http://h/sk-compare-secret-1234",
        },
      },
    });
    expect(configChanges(a, b)).toEqual([
      {
        field: "agent.system_template",
        old: "You are a helpful assistant.",
        new: "You are a careful assistant.",
      },
      { field: "model.model_kwargs.api_base", old: null, new: "http://h/[REDACTED]" },
      { field: "model.model_kwargs.temperature", old: 0, new: 0.5 },
    ]);
    expect(configChanges(a, a)).toEqual([]);
  });
});
