import { existsSync } from "node:fs";
import { type RecordedTiming, TIMING_INFO_KEY } from "../facts/run-facts.js";
import { addTrajectoryInfo } from "../trajectory.js";

/**
 * A run's (or an instance's) timing, from `startedAt` (ms since the epoch) to now, recorded in its trajectory's
 * `info.swerun_timing` when `trajectory` is given and exists (every output reads it from there).
 */
export function endTiming(startedAt: number, trajectory: string | undefined): RecordedTiming {
  const endedAt = Date.now();
  const timing: RecordedTiming = {
    started_at: startedAt / 1000,
    ended_at: endedAt / 1000,
    wall_time_s: (endedAt - startedAt) / 1000,
  };
  if (trajectory !== undefined && existsSync(trajectory)) {
    try {
      addTrajectoryInfo(trajectory, { [TIMING_INFO_KEY]: timing });
    } catch {
      // a trajectory that cannot be read back keeps what it has; the outputs then time it from its messages
    }
  }
  return timing;
}
