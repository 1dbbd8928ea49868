import { writeSync } from "node:fs";

/**
 * Test-only hook for crash tests: with `SWERUN_CHAOS_PAUSE=<point>[,<point>...]` set, the first time
 * this process reaches a named point it writes `swerun chaos: paused at <point> (pid N)` to stderr and
 * stops itself (SIGSTOP), so a test can SIGKILL it exactly there. Unset (always, outside tests), it
 * does nothing. Points: `run-recorded` (run.json written at a batch's start), `container-created` (a
 * Docker container created, not started), `action-start` (a step's command about to run),
 * `atomic-rename` (an atomic write's temp file written, not renamed yet), `trajectory-renamed`
 * (an instance's trajectory in place, preds.json not rewritten yet), `trajectory-appended` (a step's
 * messages written into the trajectory in place, its `info.model_stats` not yet), `trajectory-tail-cut` (half
 * of a step's in-place write done: the file cut inside its last step, as a kill inside a large write leaves it), `grading-tests` (a grading's tests
 * about to run in its container), `grading-ended` (`--eval`: a grading's report.json written, its verdict
 * not in run.json yet), `image-pulled` (a budgeted batch's image pulled, its id not in the ledger yet), `render:<template>` (the agent about
 * to render that template, e.g. `render:instance_template`: a signal sent then arrives during the render).
 */
export function chaosPoint(point: string): void {
  const wanted = process.env.SWERUN_CHAOS_PAUSE;
  if (!wanted?.split(",").includes(point)) return;
  if (paused.has(point)) return;
  paused.add(point);
  writeSync(2, `swerun chaos: paused at ${point} (pid ${process.pid})\n`);
  process.kill(process.pid, "SIGSTOP");
}

/** Points this process has stopped at already (each stops it once). */
const paused = new Set<string>();

/** Whether this process will stop at `point` when it reaches it (a test asked for it and it has not yet). */
export function chaosArmed(point: string): boolean {
  return Boolean(process.env.SWERUN_CHAOS_PAUSE?.split(",").includes(point)) && !paused.has(point);
}
