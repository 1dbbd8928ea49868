import { lookupSetting, type SettingsContext } from "../config/keys.js";
import { exitMessage, LimitsExceeded, UserError } from "../errors.js";

/**
 * Cost and calls of every model in this process, with the limits of `SWERUN_GLOBAL_COST_LIMIT` and
 * `SWERUN_GLOBAL_CALL_LIMIT` (mini-swe-agent's `MSWEA_GLOBAL_*` names are read too; 0 = no limit).
 */
export class GlobalModelStats {
  cost = 0;
  calls = 0;
  readonly costLimit: number;
  readonly callLimit: number;

  constructor(costLimit = 0, callLimit = 0) {
    this.costLimit = costLimit;
    this.callLimit = callLimit;
  }

  /**
   * Throws LimitsExceeded before a call that the limits no longer allow: once the total cost has reached
   * the cost limit, or the calls made have reached the call limit. A response already paid for is never thrown away.
   */
  checkBeforeCall(): void {
    const costReached = this.costLimit > 0 && this.cost >= this.costLimit;
    const callsReached = this.callLimit > 0 && this.calls >= this.callLimit;
    if (!costReached && !callsReached) return;
    const detail = costReached
      ? `$${this.cost.toFixed(4)} spent of $${this.costLimit.toFixed(4)}`
      : `${this.calls} calls made of ${this.callLimit}`;
    throw new LimitsExceeded(
      exitMessage(
        "LimitsExceeded",
        "",
        `Global cost/call limit exceeded: ${detail} (all runs of this process)`,
      ),
    );
  }

  add(cost: number): void {
    this.cost += cost;
    this.calls += 1;
  }
}

function limit(names: string[], integer: boolean, context: SettingsContext): number {
  const setting = lookupSetting(names, context);
  if (!setting) return 0;
  const value = Number(setting.value);
  if (!Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) {
    const kind = integer ? "a whole number" : "a number";
    throw new UserError(
      `${setting.name} (from ${setting.source}): expected ${kind} >= 0, got "${setting.value}"`,
    );
  }
  return value;
}

let stats: GlobalModelStats | undefined;

/** The process-wide totals; the limits are read from the settings on first use. */
export function globalModelStats(context: SettingsContext = {}): GlobalModelStats {
  stats ??= new GlobalModelStats(
    limit(["SWERUN_GLOBAL_COST_LIMIT", "MSWEA_GLOBAL_COST_LIMIT"], false, context),
    limit(["SWERUN_GLOBAL_CALL_LIMIT", "MSWEA_GLOBAL_CALL_LIMIT"], true, context),
  );
  return stats;
}

/** Forgets the totals and limits (tests; a new process starts fresh anyway). */
export function resetGlobalModelStats(): void {
  stats = undefined;
}
