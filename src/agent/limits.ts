import type { AgentConfig } from "../config/schema.js";
import { exitMessage, LimitsExceeded, TimeExceeded } from "../errors.js";

/** Before a model call: throws LimitsExceeded at the step or cost limit, TimeExceeded past the wall time (0: none). */
export function checkLimits(
  config: AgentConfig,
  run: { nCalls: number; cost: number; elapsed: number },
): void {
  const { step_limit, cost_limit, wall_time_limit_seconds } = config;
  if ((step_limit > 0 && run.nCalls >= step_limit) || (cost_limit > 0 && run.cost >= cost_limit)) {
    throw new LimitsExceeded(exitMessage("LimitsExceeded"));
  }
  if (wall_time_limit_seconds > 0 && run.elapsed >= wall_time_limit_seconds) {
    throw new TimeExceeded(exitMessage("TimeExceeded"));
  }
}
