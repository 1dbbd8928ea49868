/**
 * Time for durations and timestamps without Node's `performance` global, whose first use loads perf_hooks
 * (~1.6 ms of a short run's start, bench/lean.ts).
 */

/** Monotonic milliseconds (process.hrtime), for durations. */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

const wallAtLoad = Date.now();
const monotonicAtLoad = monotonicMs();

/** Wall-clock milliseconds since the epoch with a fraction (to the microsecond), steady between calls. */
export function preciseNowMs(): number {
  return wallAtLoad + (monotonicMs() - monotonicAtLoad);
}
