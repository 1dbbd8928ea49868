import { mkNum } from "../python/number.js";

/** Template variables that mini-swe-agent's configs type as floats. */
const FLOAT_VARS = ["cost_limit", "cost_per_call", "model_cost"];

/**
 * The variables every agent template sees: `vars` (configs, environment and model variables, the task) and
 * the run's counters. The fields mini-swe-agent types as floats render as Python prints a float (`3.0`, `0.0`).
 */
export function agentTemplateVars(
  vars: Record<string, unknown>,
  run: { nCalls: number; cost: number; elapsed: number },
): Record<string, unknown> {
  const all: Record<string, unknown> = {
    ...vars,
    n_model_calls: run.nCalls,
    model_cost: run.cost,
    elapsed_seconds: run.elapsed,
  };
  for (const name of FLOAT_VARS) {
    const value = all[name];
    if (typeof value === "number") all[name] = mkNum(value, true);
  }
  return all;
}
