import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../src/util/package-root.js";

export const BENCH_IMAGE = "swerun-demo/calc:latest";

/** The last scripted action of every instance: it submits the instance's diff. */
export const SUBMIT_COMMAND = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff";

/**
 * A dataset file of `instances` copies of the demo's calc instance, each scripted to run `steps - 1` times
 * `command` and then submit: the batch benches' workload. Returns the file's path.
 */
export function scriptedCalcDataset(dir: string, instances: number, steps: number, command: string): string {
  cpSync(join(packageRoot(), "config", "swebench-demo", "calc"), join(dir, "calc"), { recursive: true });
  const say = (text: string) => ({
    role: "assistant",
    content: text,
    extra: { actions: [{ command: text }], cost: 0 },
  });
  const rows = Array.from({ length: instances }, (_, i) => ({
    instance_id: `bench__calc-${i + 1}`,
    problem_statement: "bench",
    fixture: "calc",
    image_name: BENCH_IMAGE,
    swerun_scripted_outputs: [...Array.from({ length: steps - 1 }, () => say(command)), say(SUBMIT_COMMAND)],
  }));
  const path = join(dir, "dataset.json");
  writeFileSync(path, JSON.stringify(rows));
  return path;
}
