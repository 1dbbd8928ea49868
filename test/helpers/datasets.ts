import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../src/util/package-root.js";

const DEMO = join(packageRoot(), "config", "swebench-demo");

/** A step of a scripted model, in mini-swe-agent's message shape. */
export const step = (command: string) => ({
  role: "assistant",
  content: `running ${command}`,
  extra: { actions: [{ command }], cost: 0.01 },
});

/**
 * A SWE-bench-shaped dataset file in `dir`: `count` instances on the demo's calc fixture, each with a
 * scripted model that runs `before` first (e.g. a sleep), fixes the bug and submits `git diff`.
 */
export function writeDataset(
  dir: string,
  count: number,
  before = "true",
  extra: Record<string, unknown> = {},
): string {
  cpSync(join(DEMO, "calc"), join(dir, "calc"), { recursive: true });
  const instances = Array.from({ length: count }, (_, i) => ({
    instance_id: `test__calc-${i + 1}`,
    problem_statement: "add subtracts",
    repo: "test/calc",
    fixture: "calc",
    image_name: "swerun-demo/calc:latest",
    swerun_scripted_outputs: [
      step(before),
      step("sed -i 's/\\$1 - \\$2/$1 + $2/' calc.sh && bash test.sh"),
      step("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached"),
    ],
    ...extra,
  }));
  const path = join(dir, "dataset.json");
  writeFileSync(path, JSON.stringify(instances, null, 2));
  return path;
}
