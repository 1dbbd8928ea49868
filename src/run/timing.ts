import { existsSync } from "node:fs";
import { type RecordedTiming, TIMING_INFO_KEY } from "../facts/run-facts.js";
import { addTrajectoryInfo } from "../trajectory/add-info.js";

/**
 * A run's (or an instance's) timing, from `startedAt` (ms since the epoch) to now, recorded in its trajectory's
 * `info.swerun_timing` (every output reads it from there): by `complete` (a run's `completeTrajectory`: its
 * held last save, written once with the timing) when given, else added to `trajectory` when it exists.
 */
export async function endTiming(
  startedAt: number,
  trajectory: string | undefined,
  complete?: (extra?: Record<string, unknown>) => Promise<void>,
): Promise<RecordedTiming> {
  const endedAt = Date.now();
  const timing: RecordedTiming = {
    started_at: startedAt / 1000,
    ended_at: endedAt / 1000,
    wall_time_s: (endedAt - startedAt) / 1000,
  };
  try {
    if (complete) await complete({ [TIMING_INFO_KEY]: timing });
    else if (trajectory !== undefined && existsSync(trajectory))
      addTrajectoryInfo(trajectory, { [TIMING_INFO_KEY]: timing });
  } catch {
    // a trajectory that cannot be written or read back keeps what it has; the outputs then time it from its messages
  }
  return timing;
}
