import { describe, expect, it } from "vitest";
import { checkLimits } from "../../src/agent/limits.js";
import { agentSchema } from "../../src/config/schema.js";
import { LimitsExceeded, TimeExceeded } from "../../src/errors.js";

const config = (limits: Record<string, number>) =>
  agentSchema.parse({ system_template: "s", instance_template: "i", ...limits });

function thrown(run: () => void): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("checkLimits", () => {
  it("lets a call through below every limit, and with limits of 0 (none)", () => {
    const limits = { step_limit: 3, cost_limit: 1, wall_time_limit_seconds: 10 };
    expect(thrown(() => checkLimits(config(limits), { nCalls: 2, cost: 0.99, elapsed: 9 }))).toBeUndefined();
    const none = { step_limit: 0, cost_limit: 0, wall_time_limit_seconds: 0 };
    expect(thrown(() => checkLimits(config(none), { nCalls: 1e6, cost: 1e6, elapsed: 1e6 }))).toBeUndefined();
  });

  it("ends the run at the step or cost limit with LimitsExceeded, past the wall time with TimeExceeded", () => {
    const limits = { step_limit: 3, cost_limit: 1, wall_time_limit_seconds: 10 };
    const steps = thrown(() => checkLimits(config(limits), { nCalls: 3, cost: 0, elapsed: 0 }));
    expect(steps).toBeInstanceOf(LimitsExceeded);
    expect((steps as LimitsExceeded).messages).toEqual([
      { role: "exit", content: "LimitsExceeded", extra: { exit_status: "LimitsExceeded", submission: "" } },
    ]);
    const cost = thrown(() => checkLimits(config(limits), { nCalls: 0, cost: 1, elapsed: 0 }));
    expect(cost).toBeInstanceOf(LimitsExceeded);
    expect(cost).not.toBeInstanceOf(TimeExceeded);
    const time = thrown(() => checkLimits(config(limits), { nCalls: 0, cost: 0, elapsed: 10 }));
    expect(time).toBeInstanceOf(TimeExceeded);
    expect((time as TimeExceeded).messages[0]?.extra).toMatchObject({ exit_status: "TimeExceeded" });
  });
});
